package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// WriteHTML writes the campaign's report as one self-contained HTML file:
// its counts, the three plots as inline SVG, and the discoveries table
// with each discovery's judge report.
func WriteHTML(w io.Writer, d *Data, generated time.Time) error {
	charts := Charts(d)
	svgs := make([]template.HTML, len(charts))
	for i, c := range charts {
		svgs[i] = template.HTML(c.SVG()) // rendered from numbers, strings escaped
	}
	return page.Execute(w, map[string]any{"D": d, "Charts": svgs, "Generated": generated.UTC().Format(time.RFC3339)})
}

// PropertyText writes a property's value with its uncertainty and unit,
// "3.21 ± 0.39 eV".
func PropertyText(p messages.PropertyValue) string {
	s := fmt.Sprintf("%.3g", p.Value)
	if p.Uncertainty > 0 {
		s += fmt.Sprintf(" ± %.2g", p.Uncertainty)
	}
	if p.Unit != "" {
		s += " " + p.Unit
	}
	return s
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"prop": func(props map[string]messages.PropertyValue, name string) string {
		if p, ok := props[name]; ok {
			return PropertyText(p)
		}
		return "—"
	},
	"ehull": func(d Discovery) string {
		if d.EAboveHull == nil {
			return "—"
		}
		s := fmt.Sprintf("%+.3f", *d.EAboveHull)
		if d.EAboveHullError != nil {
			s += fmt.Sprintf(" ± %.2g", *d.EAboveHullError)
		}
		return s
	},
	"pct": func(n, of int) string {
		if of <= 0 {
			return "0.0%"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
	},
	"columns": func(ds []Discovery) []string {
		seen := map[string]bool{}
		var out []string
		for _, d := range ds {
			for _, p := range d.Constrained {
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
		return out
	},
	"checks": func(cs []messages.Check) string {
		var parts []string
		for _, c := range cs {
			mark := "✓"
			if !c.Passed {
				mark = "✗"
			}
			parts = append(parts, mark+" "+c.Name)
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Crucible report: {{.D.Campaign}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px} .sub{color:#666;margin-top:0}
.stats{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.stat{background:#f4f6f8;border-radius:6px;padding:8px 14px}.stat b{display:block;font-size:20px}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:16px}
.plots svg{width:100%;height:auto;border:1px solid #e3e6ea;border-radius:6px}
table{border-collapse:collapse;width:100%;font-size:13px;margin-top:12px}
th,td{border-bottom:1px solid #e3e6ea;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f8} td.num{text-align:right;white-space:nowrap} details{max-width:520px}
</style></head><body>
<h1>Campaign {{.D.Campaign}}</h1>
<p class="sub">{{.D.Task}} · state {{.D.State}} · discovery curve from the {{.D.CurveSource}} · report written {{.Generated}}</p>
<div class="stats">
<div class="stat"><b>{{.D.Evaluated}} / {{.D.Budget}}</b>evaluated</div>
<div class="stat"><b>{{.D.Hits}}</b>hits ({{pct .D.Hits .D.Evaluated}})</div>
<div class="stat"><b>{{.D.StableHits}}</b>stable hits ({{pct .D.StableHits .D.Evaluated}})</div>
<div class="stat"><b>{{.D.NStable}}</b>N_stable · AUDC {{printf "%.3f" .D.AUDC}}</div>
<div class="stat"><b>{{.D.Discovered}}</b>discoveries</div>
</div>
<div class="plots">{{range .Charts}}<div>{{.}}</div>{{end}}</div>
<h2>Discoveries</h2>
{{if .D.Discoveries}}{{$cols := columns .D.Discoveries}}
<table><thead><tr><th>candidate</th><th>formula</th><th>gen.</th><th>E_hull (eV/atom)</th>{{range $cols}}<th>{{.}}</th>{{end}}<th>score</th><th>novelty</th><th>judge</th></tr></thead><tbody>
{{range .D.Discoveries}}{{$d := .}}<tr><td>{{.ID}}</td><td>{{.Formula}}</td><td class="num">{{.Generation}}</td><td class="num">{{ehull .}}</td>{{range $cols}}<td class="num">{{prop $d.Properties .}}</td>{{end}}<td class="num">{{printf "%.3f" .Score}}</td><td>{{.Novelty}}</td><td><details><summary>{{checks .Checks}}</summary>{{.Report}}</details></td></tr>
{{end}}</tbody></table>
{{else}}<p>No discoveries.</p>{{end}}
</body></html>
`))
