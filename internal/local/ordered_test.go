package local_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestOrderedReproducible: two runs of an ordered campaign with one seed
// give the same evaluations (ids, structures, values), verdicts,
// reflections and summary, apart from time stamps, timings and which
// evaluator replica did the work — although the second run has two
// evaluators, whose batches interleave differently, and (when the real
// servers are configured) other brokers.
func TestOrderedReproducible(t *testing.T) {
	spec := func() *messages.CampaignSpec {
		s := &messages.CampaignSpec{ID: "ordered", Task: easyTask(), Budget: 40, Seed: 5, Episodes: 2, Ordered: true}
		s.ApplyDefaults()
		return s
	}
	second := local.Options{Evaluators: 2}
	if opts, ok := servers(t)["real"]; ok {
		second.NATSURL, second.RedisURL, second.MemoryStreams = opts.NATSURL, opts.RedisURL, opts.MemoryStreams
	}
	var runs [2]*local.Result
	for i, opts := range []local.Options{{}, second} {
		st := start(t, opts)
		res, err := local.Run(context.Background(), st, spec(), local.RunOptions{Timeout: 4 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		checkCampaign(t, st, spec(), res)
		runs[i] = res
	}
	a, b := runs[0], runs[1]
	if len(a.Evaluations) != spec().Budget {
		t.Fatalf("%d evaluations, budget %d", len(a.Evaluations), spec().Budget)
	}
	same := func(what string, x, y any) {
		t.Helper()
		jx, err1 := json.Marshal(x)
		jy, err2 := json.Marshal(y)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if string(jx) != string(jy) {
			k := 0
			for k < min(len(jx), len(jy)) && jx[k] == jy[k] {
				k++
			}
			lo := max(k-200, 0)
			t.Errorf("%s differs between the runs at byte %d:\n…%s\n…%s", what, k, jx[lo:min(k+200, len(jx))], jy[lo:min(k+200, len(jy))])
		}
	}
	for _, r := range runs {
		for _, ev := range append(append([]*messages.Evaluation{}, r.Seeds...), r.Evaluations...) {
			untimed(ev)
		}
		for _, v := range append(append([]*messages.Verdict{}, r.Discoveries...), r.Verdicts...) {
			// The judge's evidence names the evaluator replica.
			replica := "[" + v.Evaluation.Evaluator + "]"
			for i := range v.Checks {
				v.Checks[i].Detail = strings.ReplaceAll(v.Checks[i].Detail, replica, "")
			}
			v.Report = strings.ReplaceAll(v.Report, replica, "")
			untimed(&v.Evaluation)
			v.JudgedAt = time.Time{}
		}
		for _, x := range r.Reflections {
			x.At = time.Time{}
		}
		r.Summary.WallSeconds = 0
	}
	if len(a.Evaluations) != len(b.Evaluations) || len(a.Seeds) != len(b.Seeds) {
		t.Fatalf("%d+%d evaluations, then %d+%d", len(a.Seeds), len(a.Evaluations), len(b.Seeds), len(b.Evaluations))
	}
	for i := range a.Seeds {
		same("seed "+a.Seeds[i].ID, a.Seeds[i], b.Seeds[i])
	}
	for i := range a.Evaluations {
		same("evaluation "+a.Evaluations[i].ID, a.Evaluations[i], b.Evaluations[i])
	}
	same("discoveries", a.Discoveries, b.Discoveries)
	same("verdicts", a.Verdicts, b.Verdicts)
	same("reflections", a.Reflections, b.Reflections)
	same("summary", a.Summary, b.Summary)
}

// untimed clears what an evaluation records of when and where it was made.
func untimed(ev *messages.Evaluation) {
	ev.Candidate.ProposedAt, ev.EvaluatedAt = time.Time{}, time.Time{}
	ev.Evaluator, ev.OracleSeconds = "", 0
}
