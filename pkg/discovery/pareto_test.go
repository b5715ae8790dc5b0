package discovery

import (
	"reflect"
	"testing"

	"github.com/crucible-sci/crucible/pkg/task"
)

func TestObjectives(t *testing.T) {
	cs := []task.Constraint{task.AtLeast("band_gap", 2.5), task.AtMost("formation_energy_per_atom", -1), task.Between("bulk_modulus", 90, 130)}
	want := []Objective{{Property: "band_gap", Sense: Maximize}, {Property: "formation_energy_per_atom", Sense: Minimize}, {Property: "bulk_modulus", Sense: Target, Target: 110}}
	if got := Objectives(cs); !reflect.DeepEqual(got, want) {
		t.Errorf("objectives %+v, want %+v", got, want)
	}
}

func TestParetoFront(t *testing.T) {
	objs := Objectives([]task.Constraint{task.AtLeast("band_gap", 2.5), task.AtMost("formation_energy_per_atom", -1)})
	pt := func(id, f string, gap, ef float64) Point {
		return Point{ID: id, Formula: f, Values: map[string]float64{"band_gap": gap, "formation_energy_per_atom": ef}}
	}
	points := []Point{
		pt("c5", "LiF", 8, -3),    // dominated by c1
		pt("c1", "MgF2", 9, -3.2), // best of both
		pt("c2", "AlN", 5, -3.5),  // lower energy, smaller gap: on the front
		pt("c3", "MgF2", 9, -3.2), // c1 again (another cell): a duplicate
		pt("c4", "GaN", 9, -3.2),  // equal values, another formula: kept
		pt("c6", "ZnO", 3, -1.5),  // dominated
		{ID: "c7", Formula: "X", Values: map[string]float64{"band_gap": 20}}, // no energy: not placed
	}
	var ids []string
	for _, p := range ParetoFront(points, objs) {
		ids = append(ids, p.ID)
	}
	if want := []string{"c1", "c2", "c4"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("front %v, want %v", ids, want)
	}
	// Clipped margins would tie every comfortable hit at {1, 1}; raw
	// values tell them apart, and an interval's midpoint is its best.
	objs = Objectives([]task.Constraint{task.Between("bulk_modulus", 90, 130)})
	bm := func(id string, v float64) Point {
		return Point{ID: id, Formula: id, Values: map[string]float64{"bulk_modulus": v}}
	}
	front := ParetoFront([]Point{bm("a", 95), bm("b", 112), bm("c", 129)}, objs)
	if len(front) != 1 || front[0].ID != "b" {
		t.Errorf("interval front %+v, want b alone", front)
	}
	if ParetoFront(points, nil) != nil {
		t.Error("a front without objectives")
	}
}
