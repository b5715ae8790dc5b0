package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/discovery"
)

// Chart is one plot: axes and series, rendered as SVG (SVG) or PNG
// (WritePNG) from the same description.
type Chart struct {
	Name, Title, XLabel, YLabel string
	Series                      []Series
	// Empty, when set, is written instead of the plot (nothing to show).
	Empty string
}

// Series is a line (Line) or a set of points.
type Series struct {
	Label, Color string
	X, Y         []float64
	Line         bool
	// Tips label the points (SVG tooltips), when not nil.
	Tips []string
}

// Charts are a campaign's three plots: the discovery curve, the rates
// over time and the Pareto front.
func Charts(d *Data) []Chart {
	return []Chart{CurveChart(d), RatesChart(d), ParetoChart(d)}
}

// CurveChart is MADE's discovery curve (§4.4): N_stable, the novel stable
// candidates among the first t evaluations, against t, a step at each
// discovery.
func CurveChart(d *Data) Chart {
	c := Chart{Name: "curve", Title: fmt.Sprintf("Discovery curve: N_stable %d, AUDC %.3f", d.NStable, d.AUDC),
		XLabel: "evaluations", YLabel: "N_stable"}
	end := float64(max(d.Evaluated, 1))
	s := Series{Label: "N_stable", Color: "#1f6fb2", Line: true, X: []float64{0}, Y: []float64{0}}
	for k, t := range d.Curve {
		s.X = append(s.X, float64(t), float64(t))
		s.Y = append(s.Y, float64(k), float64(k+1))
	}
	s.X = append(s.X, max(end, s.X[len(s.X)-1]))
	s.Y = append(s.Y, float64(len(d.Curve)))
	c.Series = []Series{s}
	return c
}

// RatesChart is the cumulative hit rate and stability rate (LLEMA §3.2),
// in percent, against the evaluations.
func RatesChart(d *Data) Chart {
	c := Chart{Name: "rates", Title: "Hit and stability rates", XLabel: "evaluations", YLabel: "% of evaluated"}
	if len(d.Rates) == 0 {
		c.Empty = "no evaluations yet"
		return c
	}
	hit := Series{Label: "hit rate", Color: "#d9822b", Line: true}
	stab := Series{Label: "stability rate", Color: "#2b9d5a", Line: true}
	for _, p := range d.Rates {
		hit.X, hit.Y = append(hit.X, float64(p.Evaluated)), append(hit.Y, 100*p.HitRate)
		stab.X, stab.Y = append(stab.X, float64(p.Evaluated)), append(stab.Y, 100*p.StabilityRate)
	}
	c.Series = []Series{hit, stab}
	return c
}

// ParetoChart places the novel hits on the task's first two objectives
// and draws the front through the non-dominated ones.
func ParetoChart(d *Data) Chart {
	c := Chart{Name: "pareto", Title: "Pareto front of the novel hits"}
	if len(d.Objectives) < 2 {
		c.Empty = "the task has fewer than two objectives"
		return c
	}
	ox, oy := d.Objectives[0], d.Objectives[1]
	c.XLabel, c.YLabel = objectiveLabel(ox), objectiveLabel(oy)
	all := Series{Label: "novel hits", Color: "#9aa5b1"}
	front := Series{Label: "Pareto front", Color: "#c0392b", Line: true}
	add := func(s *Series, p discovery.Point) {
		x, okx := p.Values[ox.Property]
		y, oky := p.Values[oy.Property]
		if okx && oky {
			s.X, s.Y = append(s.X, x), append(s.Y, y)
			s.Tips = append(s.Tips, fmt.Sprintf("%s %s", p.Formula, p.ID))
		}
	}
	for _, p := range d.Points {
		add(&all, p)
	}
	fr := append([]discovery.Point(nil), d.Front...)
	sort.SliceStable(fr, func(i, j int) bool { return fr[i].Values[ox.Property] < fr[j].Values[ox.Property] })
	for _, p := range fr {
		add(&front, p)
	}
	if len(all.X) == 0 {
		c.Empty = "no novel hits yet"
		return c
	}
	c.Series = []Series{all, front}
	return c
}

// objectiveLabel is a property with the direction that is better.
func objectiveLabel(o discovery.Objective) string {
	switch o.Sense {
	case discovery.Maximize:
		return o.Property + " (higher is better)"
	case discovery.Minimize:
		return o.Property + " (lower is better)"
	}
	return fmt.Sprintf("%s (target %g)", o.Property, o.Target)
}

// The SVG's size and margins, in user units.
const (
	svgW, svgH                    = 560.0, 320.0
	padL, padR, padTop, padBottom = 62.0, 16.0, 30.0, 48.0
)

// bounds are the data's range over every series, widened to nice ticks.
func (c Chart) bounds() (x0, x1, y0, y1 float64, xt, yt []float64) {
	x0, x1, y0, y1 = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			x0, x1 = math.Min(x0, s.X[i]), math.Max(x1, s.X[i])
			y0, y1 = math.Min(y0, s.Y[i]), math.Max(y1, s.Y[i])
		}
	}
	if math.IsInf(x0, 0) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	x0, x1, xt = niceRange(x0, x1)
	y0, y1, yt = niceRange(y0, y1)
	return
}

// niceRange widens [lo, hi] to multiples of a 1, 2 or 5 step giving about
// five ticks, and returns the ticks.
func niceRange(lo, hi float64) (float64, float64, []float64) {
	if hi <= lo {
		pad := math.Max(math.Abs(lo)*0.1, 1)
		lo, hi = lo-pad, hi+pad
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	var ticks []float64
	for v := lo; v <= hi+step/2; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
	}
	return lo, hi, ticks
}

// SVG renders the chart as an inline SVG element (no external
// resources), its data points with tooltips.
func (c Chart) SVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="%s" viewBox="0 0 %g %g" role="img" aria-label="%s">`,
		c.Name, svgW, svgH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text x="%g" y="18" font-size="14" font-weight="600" fill="#222">%s</text>`, padL, html.EscapeString(c.Title))
	if c.Empty != "" {
		fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="13" fill="#777" text-anchor="middle">%s</text></svg>`, svgW/2, svgH/2, html.EscapeString(c.Empty))
		return b.String()
	}
	x0, x1, y0, y1, xt, yt := c.bounds()
	pw, ph := svgW-padL-padR, svgH-padTop-padBottom
	px := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return padTop + ph - (y-y0)/(y1-y0)*ph }
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fff" stroke="#bbb"/>`, padL, padTop, pw, ph)
	for _, t := range xt {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#eee"/><text x="%.1f" y="%g" font-size="11" fill="#555" text-anchor="middle">%s</text>`,
			px(t), padTop, px(t), padTop+ph, px(t), padTop+ph+14, tickLabel(t))
	}
	for _, t := range yt {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eee"/><text x="%g" y="%.1f" font-size="11" fill="#555" text-anchor="end">%s</text>`,
			padL, py(t), padL+pw, py(t), padL-5, py(t)+4, tickLabel(t))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="12" fill="#333" text-anchor="middle">%s</text>`, padL+pw/2, svgH-12, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="14" y="%g" font-size="12" fill="#333" text-anchor="middle" transform="rotate(-90 14 %g)">%s</text>`,
		padTop+ph/2, padTop+ph/2, html.EscapeString(c.YLabel))
	for i, s := range c.Series {
		if s.Line && len(s.X) > 1 {
			b.WriteString(`<polyline fill="none" stroke-width="2" stroke="` + s.Color + `" points="`)
			for j := range s.X {
				fmt.Fprintf(&b, "%.1f,%.1f ", px(s.X[j]), py(s.Y[j]))
			}
			b.WriteString(`"/>`)
		}
		if s.Tips != nil {
			for j := range s.X {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`, px(s.X[j]), py(s.Y[j]), s.Color, html.EscapeString(s.Tips[j]))
			}
		}
		// Legend, top right inside the plot.
		ly := padTop + 14 + 16*float64(i)
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="12" height="4" fill="%s"/><text x="%g" y="%g" font-size="11" fill="#333">%s</text>`,
			padL+pw-150, ly-4, s.Color, padL+pw-133, ly, html.EscapeString(s.Label))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// tickLabel writes a tick value briefly.
func tickLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
