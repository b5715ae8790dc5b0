package report

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WritePNG writes each chart as <prefix>-<name>.png (gonum/plot, 6×3.5
// in) and returns the files written. A chart with nothing to show is
// written with its title and no data.
func WritePNG(prefix string, charts []Chart) ([]string, error) {
	var files []string
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.Title
		if c.Empty != "" {
			p.Title.Text += " (" + c.Empty + ")"
		}
		p.X.Label.Text, p.Y.Label.Text = c.XLabel, c.YLabel
		p.Add(plotter.NewGrid())
		for _, s := range c.Series {
			xys := make(plotter.XYs, len(s.X))
			for i := range s.X {
				xys[i].X, xys[i].Y = s.X[i], s.Y[i]
			}
			col := parseColor(s.Color)
			if s.Line && len(xys) > 1 {
				l, err := plotter.NewLine(xys)
				if err != nil {
					return files, fmt.Errorf("%s: %w", c.Name, err)
				}
				l.Color, l.Width = col, vg.Points(1.5)
				p.Add(l)
				p.Legend.Add(s.Label, l)
			}
			if s.Tips != nil && len(xys) > 0 {
				sc, err := plotter.NewScatter(xys)
				if err != nil {
					return files, fmt.Errorf("%s: %w", c.Name, err)
				}
				sc.GlyphStyle.Color, sc.GlyphStyle.Radius = col, vg.Points(2.5)
				p.Add(sc)
				if !s.Line {
					p.Legend.Add(s.Label, sc)
				}
			}
		}
		p.Legend.Top = true
		path := prefix + "-" + c.Name + ".png"
		if err := p.Save(6*vg.Inch, 3.5*vg.Inch, path); err != nil {
			return files, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// parseColor reads "#rrggbb" (black otherwise).
func parseColor(s string) color.Color {
	if len(s) == 7 && s[0] == '#' {
		if v, err := strconv.ParseUint(s[1:], 16, 32); err == nil {
			return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
		}
	}
	return color.Black
}
