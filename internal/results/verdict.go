package results

import (
	"fmt"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// VerdictLine renders a judge's verdict as one line: time, DISCOVERY or
// rejected, candidate, formula, energy above hull, the constrained
// properties, and a rejection's reasons.
func VerdictLine(v *messages.Verdict) string {
	e := &v.Evaluation
	var b strings.Builder
	kind := "DISCOVERY"
	if !v.Accepted {
		kind = "rejected "
	}
	fmt.Fprintf(&b, "%s  %s  %s  %-12s", v.JudgedAt.Format(time.RFC3339), kind, v.ID, v.Formula)
	if e.EAboveHull != nil {
		fmt.Fprintf(&b, "  E_hull %+.3f", *e.EAboveHull)
	}
	for _, m := range e.Margins {
		if p, ok := e.Properties[m.Property]; ok {
			fmt.Fprintf(&b, "  %s %.3g %s", m.Property, p.Value, p.Unit)
		}
	}
	if !v.Accepted {
		fmt.Fprintf(&b, "  — %s", strings.Join(v.Reasons, "; "))
	}
	return b.String()
}
