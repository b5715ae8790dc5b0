package crystal

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCompositionsMatchPymatgen checks reduced formulas, chemical systems,
// anonymous formulas, weights and pymatgen's spaced formula for 410
// formulas of the Materials Project tables (300 at random from the
// formation-energy table, 100 parenthesised ones from the energy-above-hull
// table, and a few classics), as pymatgen 2022.11.7 computes them
// (testdata/formulas/make_fixture.py). The whole formation-energy table
// (106 250 distinct formulas) agrees too; that check needs pymatgen and is
// not part of the suite.
func TestCompositionsMatchPymatgen(t *testing.T) {
	f, err := os.Open("testdata/formulas/pymatgen_compositions.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	parenthesised := 0
	for _, r := range rows[1:] {
		formula, reduced, system, anon, weightS, pmgFormula := r[0], r[1], r[2], r[3], r[4], r[5]
		if strings.Contains(formula, "(") {
			parenthesised++
		}
		c, err := ParseFormula(formula)
		if err != nil {
			t.Errorf("%s: %v", formula, err)
			continue
		}
		weight, _ := strconv.ParseFloat(weightS, 64)
		if got := c.ReducedFormula(); got != reduced {
			t.Errorf("%s: reduced formula %s, pymatgen %s", formula, got, reduced)
		}
		if got := c.ChemicalSystem(); got != system {
			t.Errorf("%s: chemical system %s, pymatgen %s", formula, got, system)
		}
		if got := c.AnonymousFormula(); got != anon {
			t.Errorf("%s: anonymous formula %s, pymatgen %s", formula, got, anon)
		}
		if got := c.Formula(); got != pmgFormula {
			t.Errorf("%s: formula %q, pymatgen %q", formula, got, pmgFormula)
		}
		if math.Abs(c.Weight()-weight) > 1e-9*weight {
			t.Errorf("%s: weight %v, pymatgen %v", formula, c.Weight(), weight)
		}
	}
	if n := len(rows) - 1; n < 400 || parenthesised < 100 {
		t.Fatalf("fixture has %d formulas, %d parenthesised", n, parenthesised)
	}
}
