package oracle

import (
	"fmt"
	"sort"
	"strings"
)

// Text writes the value of the property name with its uncertainty, unit
// and source: "band_gap=4.694 eV (reference; cgcnn 4.786)" or
// "efermi=-0.669±0.363 eV (cgcnn)".
func (v Value) Text(name string) string {
	s := fmt.Sprintf("%s=%.4g", name, v.Value)
	if v.Uncertainty > 0 {
		s += fmt.Sprintf("±%.4g", v.Uncertainty)
	}
	if v.Unit != "" {
		s += " " + v.Unit
	}
	s += " (" + string(v.Source)
	if v.TieSpread > 0 {
		s += fmt.Sprintf("; tie spread %.4g", v.TieSpread)
	}
	switch {
	case v.Metallic:
		s += fmt.Sprintf("; metal, P(metal) %.3g; gap model %.4g", *v.MetalProbability, *v.Surrogate)
	case v.Surrogate != nil:
		s += fmt.Sprintf("; model %.4g", *v.Surrogate)
	}
	if !v.Metallic && v.MetalProbability != nil {
		s += fmt.Sprintf("; P(metal) %.3g", *v.MetalProbability)
	}
	return s + ")"
}

// DecompositionText writes the decomposition by decreasing fraction,
// "TiO2:0.6667+Ti:0.3333".
func (s *Stability) DecompositionText() string {
	d := s.Decomposition
	names := make([]string, 0, len(d))
	for f := range d {
		names = append(names, f)
	}
	sort.Slice(names, func(i, j int) bool {
		if d[names[i]] != d[names[j]] {
			return d[names[i]] > d[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, f := range names {
		parts[i] = fmt.Sprintf("%s:%.4g", f, d[f])
	}
	return strings.Join(parts, "+")
}

// ReasonsText joins reasons as "code: detail; code: detail".
func ReasonsText(rs []Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r.Code) + ": " + r.Detail
	}
	return strings.Join(parts, "; ")
}
