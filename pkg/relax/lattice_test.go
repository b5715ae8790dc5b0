package relax

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
)

type latticeRow struct {
	Material  string  `json:"material"`
	Structure string  `json:"structure"`
	AExpt     float64 `json:"a_expt"`
	AMP       float64 `json:"a_mp"`
	AM3GNet   float64 `json:"a_m3gnet"`
}

func latticeRows(t *testing.T) []latticeRow {
	raw, err := os.ReadFile(filepath.Join(os.Getenv("CRUCIBLE_DATA"), "golden", "m3gnet", "cubic_lattice.json"))
	if err != nil {
		t.Skipf("cubic lattice table: %v", err)
	}
	var f struct {
		Model  string       `json:"model"`
		Source string       `json:"source"`
		Rows   []latticeRow `json:"rows"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Rows
}

var symbolRE = regexp.MustCompile(`[A-Z][a-z]?`)

// conventionalCell builds the conventional cubic cell of a row's structure
// type with lattice constant a: FCC (4 atoms), BCC (2), halite and zinc
// blende (4 + 4), caesium chloride (1 + 1), cubic perovskite ABX3 (5).
// Off-stoichiometric names (HfC0.99) are built as the ideal compound.
func conventionalCell(row latticeRow, a float64) (*m3gnet.System, error) {
	var el []crystal.Element
	for _, s := range symbolRE.FindAllString(row.Material, -1) {
		e, err := crystal.ElementBySymbol(s)
		if err != nil {
			return nil, err
		}
		el = append(el, e)
	}
	fcc := []crystal.Vec3{{0, 0, 0}, {0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}}
	var species []crystal.Element
	var frac []crystal.Vec3
	add := func(e crystal.Element, shift crystal.Vec3, sites []crystal.Vec3) {
		for _, s := range sites {
			species = append(species, e)
			frac = append(frac, s.Add(shift))
		}
	}
	switch {
	case len(el) == 1 && row.Structure == "FCC":
		add(el[0], crystal.Vec3{}, fcc)
	case len(el) == 1 && row.Structure == "BCC":
		add(el[0], crystal.Vec3{}, []crystal.Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}})
	case len(el) == 2 && (row.Structure == "Halite" || row.Structure == "Halite (FCC)"):
		add(el[0], crystal.Vec3{}, fcc)
		add(el[1], crystal.Vec3{0.5, 0, 0}, fcc)
	case len(el) == 2 && row.Structure == "Zinc blende (FCC)":
		add(el[0], crystal.Vec3{}, fcc)
		add(el[1], crystal.Vec3{0.25, 0.25, 0.25}, fcc)
	case len(el) == 2 && row.Structure == "Caesium chloride":
		add(el[0], crystal.Vec3{}, []crystal.Vec3{{0, 0, 0}})
		add(el[1], crystal.Vec3{}, []crystal.Vec3{{0.5, 0.5, 0.5}})
	case len(el) == 3 && row.Structure == "Cubic perovskite":
		add(el[0], crystal.Vec3{}, []crystal.Vec3{{0, 0, 0}})
		add(el[1], crystal.Vec3{}, []crystal.Vec3{{0.5, 0.5, 0.5}})
		add(el[2], crystal.Vec3{}, []crystal.Vec3{{0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}})
	default:
		return nil, fmt.Errorf("no builder for %s (%s)", row.Material, row.Structure)
	}
	sys := &m3gnet.System{Species: species, Cell: [3][3]float64{{a, 0, 0}, {0, a, 0}, {0, 0, a}}, Periodic: true}
	for _, f := range frac {
		sys.Pos = append(sys.Pos, f.Scale(a))
	}
	return sys, nil
}

// latticeFMax is the force tolerance of the benchmark that produced
// a_m3gnet (matgl's cubic-lattice tutorial relaxes with fmax = 0.01): with
// Matbench Discovery's 0.05 the cell of a soft crystal stops while its
// stress is still up to V/N · 0.05 eV/Å³ (≈ 0.4 GPa), which for Ne or KBr
// is 0.5–2 % in a.
const latticeFMax = 0.01

type latticeOutcome struct {
	row       latticeRow
	a         float64
	steps     int
	converged bool
	err       error
}

// relaxRows relaxes the conventional cell of each row from a_mp on two
// goroutines and returns the relaxed lattice constants, (cell volume)^(1/3).
func relaxRows(m *m3gnet.Model, rows []latticeRow) []latticeOutcome {
	out := make([]latticeOutcome, len(rows))
	var systems []*m3gnet.System
	var idx []int
	for i, r := range rows {
		out[i].row = r
		sys, err := conventionalCell(r, r.AMP)
		if err != nil {
			out[i].err = err
			continue
		}
		systems = append(systems, sys)
		idx = append(idx, i)
	}
	res, errs := RelaxAll(context.Background(), func() Potential { return m3gnet.NewCalculator(m) }, systems, Options{FMax: latticeFMax}, 2)
	for k, i := range idx {
		if out[i].err = errs[k]; errs[k] == nil {
			out[i].a = math.Cbrt(math.Abs(det3(res[k].System.Cell)))
			out[i].steps, out[i].converged = res[k].Steps, res[k].Converged
		}
	}
	return out
}

// summarise logs the table and returns how many rows are within tol
// (relative) of a_m3gnet.
func summarise(t *testing.T, out []latticeOutcome, tol float64) int {
	within := 0
	var devs []float64
	for _, o := range out {
		if o.err != nil {
			t.Errorf("%s: %v", o.row.Material, o.err)
			continue
		}
		dev := (o.a - o.row.AM3GNet) / o.row.AM3GNet
		devs = append(devs, math.Abs(dev))
		mark := ""
		if math.Abs(dev) <= tol {
			within++
		} else {
			mark = "  outside"
		}
		t.Logf("%-8s %-20s a_mp %.5f  a %.5f  a_m3gnet %.5f  %+.3f %%  steps %3d converged %v%s",
			o.row.Material, o.row.Structure, o.row.AMP, o.a, o.row.AM3GNet, 100*dev, o.steps, o.converged, mark)
	}
	sort.Float64s(devs)
	if len(devs) > 0 {
		t.Logf("%d of %d within %.1f %%; median |deviation| %.3f %%, largest %.3f %%",
			within, len(out), 100*tol, 100*devs[len(devs)/2], 100*devs[len(devs)-1])
	}
	return within
}

// TestCubicLattice relaxes the conventional cells of every other row of the
// model's cubic-crystal table (rows 0, 2, 4, …; the others are kept for
// acceptance) from MP's lattice constant, and requires a_m3gnet within
// 0.3 % for at least 90 % of them. CRUCIBLE_RELAX_ALL=1 relaxes every row.
func TestCubicLattice(t *testing.T) {
	m := testModel(t)
	all := latticeRows(t)
	var rows []latticeRow
	for i, r := range all {
		if i%2 == 0 || os.Getenv("CRUCIBLE_RELAX_ALL") == "1" {
			rows = append(rows, r)
		}
	}
	out := relaxRows(m, rows)
	within := summarise(t, out, 0.003)
	if 10*within < 9*len(rows) {
		t.Errorf("%d of %d relaxed lattice constants within 0.3 %% of a_m3gnet, want ≥ 90 %%", within, len(rows))
	}
}
