package discovery

import (
	"fmt"
	"math"
	"sort"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// The senses of an objective of the Pareto front.
const (
	// Maximize: higher is better (a lower-bound constraint f ≥ l).
	Maximize = "max"
	// Minimize: lower is better (an upper-bound constraint f ≤ u).
	Minimize = "min"
	// Target: closer to Target is better (an interval constraint
	// l ≤ f ≤ u, whose margin is largest at its midpoint).
	Target = "target"
)

// Objective is one axis of the Pareto front: a property and the direction
// its constraint gives it.
type Objective = messages.ParetoObjective

// Objectives are the Pareto front's objectives of a task, one per
// constraint in order: a lower bound is maximised, an upper bound
// minimised, an interval's value brought to the interval's midpoint.
func Objectives(constraints []task.Constraint) []Objective {
	out := make([]Objective, 0, len(constraints))
	for _, c := range constraints {
		o := Objective{Property: c.Property}
		switch {
		case c.Kind == task.Lower:
			o.Sense = Maximize
		case c.Kind == task.Upper:
			o.Sense = Minimize
		case c.Lower != nil && c.Upper != nil:
			o.Sense, o.Target = Target, (*c.Lower+*c.Upper)/2
		case c.Lower != nil:
			o.Sense = Maximize
		default:
			o.Sense = Minimize
		}
		out = append(out, o)
	}
	return out
}

// utility is v turned into a quantity to maximise.
func utility(o Objective, v float64) float64 {
	switch o.Sense {
	case Minimize:
		return -v
	case Target:
		return -math.Abs(v - o.Target)
	}
	return v
}

// Point is a candidate placed in objective space by its raw property
// values (not LLEMA's clipped margins, on which every comfortable hit
// ties at 1).
type Point struct {
	ID      string             `json:"id"`
	Formula string             `json:"formula"`
	Values  map[string]float64 `json:"values"`
}

// ParetoFront returns the points no other point dominates on objs (LLEMA
// §3.2, Pareto front analysis), without duplicates: points of the same
// formula with the same values on every objective are one candidate found
// twice (another cell of one structure), and only the first by id is
// kept. A point missing an objective's value, or with a value that is
// not finite, is not placed. The front is in order of id.
func ParetoFront(points []Point, objs []Objective) []Point {
	if len(objs) == 0 {
		return nil
	}
	type placed struct {
		p Point
		u []float64
	}
	var ps []placed
	for _, p := range points {
		u := make([]float64, len(objs))
		ok := true
		for j, o := range objs {
			v, has := p.Values[o.Property]
			if !has || math.IsNaN(v) || math.IsInf(v, 0) {
				ok = false
				break
			}
			u[j] = utility(o, v)
		}
		if ok {
			ps = append(ps, placed{p, u})
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].p.ID < ps[j].p.ID })
	// One candidate found twice (same formula, same values) counts once.
	unique := ps[:0:0]
	seen := make(map[string]bool, len(ps))
	for _, a := range ps {
		key := fmt.Sprint(a.p.Formula, a.u) // %v of a float64 reads back exactly
		if !seen[key] {
			seen[key] = true
			unique = append(unique, a)
		}
	}
	us := make([][]float64, len(unique))
	for i, a := range unique {
		us[i] = a.u
	}
	front, err := task.ParetoFront(us) // errs only on NaN or ragged points, excluded above
	if err != nil {
		return nil
	}
	out := make([]Point, len(front))
	for i, k := range front {
		out[i] = unique[k].p
	}
	return out
}
