package m3gnet

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

var (
	modelOnce sync.Once
	model     *Model
	modelErr  error
)

// testModel loads the potential from CRUCIBLE_DATA, or skips the test.
func testModel(t testing.TB) *Model {
	t.Helper()
	dir := os.Getenv("CRUCIBLE_DATA")
	if dir == "" {
		t.Skip("CRUCIBLE_DATA not set")
	}
	if _, err := os.Stat(filepath.Join(dir, DataPath, "state.pt")); err != nil {
		t.Skipf("no M3GNet potential in the data directory: %v", err)
	}
	modelOnce.Do(func() { model, modelErr = LoadData(dir) })
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return model
}

type goldenCase struct {
	Name      string         `json:"name"`
	Periodic  bool           `json:"periodic"`
	Lattice   [3][3]float64  `json:"lattice"`
	Species   []string       `json:"species"`
	Frac      []crystal.Vec3 `json:"frac_coords"`
	Cart      []crystal.Vec3 `json:"cart_coords"`
	Energy    float64        `json:"energy_eV"`
	Tolerance float64        `json:"tolerance_eV"`
	Note      string         `json:"note"`
}

func goldenCases(t *testing.T) []goldenCase {
	raw, err := os.ReadFile(filepath.Join(os.Getenv("CRUCIBLE_DATA"), "golden", "m3gnet", "energies.json"))
	if err != nil {
		t.Skipf("golden energies: %v", err)
	}
	var f struct {
		Model  string       `json:"model"`
		Source string       `json:"source"`
		Cases  []goldenCase `json:"cases"`
	}
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func (c *goldenCase) system(t *testing.T) *System {
	sys := &System{Periodic: c.Periodic, Cell: c.Lattice}
	for _, s := range c.Species {
		sys.Species = append(sys.Species, crystal.MustElement(s))
	}
	if c.Periodic {
		l, err := crystal.NewLattice(c.Lattice)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.Frac {
			sys.Pos = append(sys.Pos, l.Cartesian(f))
		}
	} else {
		sys.Pos = c.Cart
	}
	return sys
}

func TestGoldenEnergies(t *testing.T) {
	m := testModel(t)
	for _, c := range goldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			e, err := m.Energy(NewWorkspace(), c.system(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %.6f eV, reference %.6f eV (Δ %.2g)", c.Name, e, c.Energy, e-c.Energy)
			if math.Abs(e-c.Energy) > c.Tolerance {
				t.Errorf("energy %.6f eV, want %.6f ± %g", e, c.Energy, c.Tolerance)
			}
		})
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
