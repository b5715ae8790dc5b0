package match

import (
	"encoding/csv"
	"fmt"
	"github.com/crucible-sci/crucible/internal/testbed"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// dataDir is the data folder (testbed.FindDataDir), or "" when there is
// none (tests needing the data skip).
func dataDir(t testing.TB) string {
	t.Helper()
	if dir, ok := testbed.FindDataDir(); ok {
		return dir
	}
	return ""
}

// mpSets reads the CIFs of the two MP sets, keyed "diel:mp-…" and
// "piezo:mp-…", once per test binary.
var mpSets = sync.OnceValues(func() (map[string]string, error) {
	dir, _ := testbed.FindDataDir()
	out := map[string]string{}
	for _, set := range []struct{ prefix, file string }{
		{"diel", "mp_dielectric_petousis2017.csv"},
		{"piezo", "mp_piezo_dejong2015.csv"},
	} {
		f, err := os.Open(filepath.Join(dir, "data", set.file))
		if err != nil {
			return nil, err
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			return nil, err
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for _, r := range rows[1:] {
			out[set.prefix+":"+r[col["material_id"]]] = r[col["cif"]]
		}
	}
	return out, nil
})

// loadNamed returns a fixture structure: "hand:NAME" from
// testdata/structures, "diel:ID" or "piezo:ID" from the MP sets.
func loadNamed(t testing.TB, name string) *crystal.Structure {
	t.Helper()
	src, id, _ := strings.Cut(name, ":")
	var (
		s   *crystal.Structure
		err error
	)
	if src == "hand" {
		data, rerr := os.ReadFile(filepath.Join("testdata", "structures", id+".json"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		s, err = crystal.ParsePymatgenJSON(data)
	} else {
		sets, serr := mpSets()
		if serr != nil {
			t.Fatal(serr)
		}
		cif, ok := sets[name]
		if !ok {
			t.Fatalf("%s is not in the MP sets", name)
		}
		s, err = crystal.ParseCIF([]byte(cif))
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// transform applies the fixture's transformations (see
// testdata/make_fixture.py) to a copy of s.
func transform(s *crystal.Structure, spec string) (*crystal.Structure, error) {
	lat := s.Lattice.Matrix()
	species := append([]crystal.Element(nil), s.Species...)
	frac := make([]vec3, len(s.Frac))
	for i, f := range s.Frac {
		frac[i] = vec3(f)
	}
	for _, op := range strings.Split(spec, ";") {
		if op == "" {
			continue
		}
		kind, arg, _ := strings.Cut(op, ":")
		var x []float64
		if arg != "" {
			for _, f := range strings.Split(arg, ",") {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", op, err)
				}
				x = append(x, v)
			}
		}
		switch kind {
		case "rot":
			u := scale(1/norm(vec3{x[0], x[1], x[2]}), vec3{x[0], x[1], x[2]})
			sn, cs := math.Sincos(x[3] * math.Pi / 180)
			// Rodrigues: R = I + sin θ K + (1 − cos θ) K²; rows ↦ R·row.
			k := mat3{{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}}
			k2 := matMul(k, k)
			var r mat3
			for i := 0; i < 3; i++ {
				for j := 0; j < 3; j++ {
					r[i][j] = sn*k[i][j] + (1-cs)*k2[i][j]
					if i == j {
						r[i][j]++
					}
				}
			}
			for i := range lat {
				var v vec3
				for a := 0; a < 3; a++ {
					v[a] = dot(r[a], lat[i])
				}
				lat[i] = v
			}
		case "shift":
			for i := range frac {
				frac[i] = add(frac[i], vec3{x[0], x[1], x[2]})
			}
		case "rev":
			for i, j := 0, len(frac)-1; i < j; i, j = i+1, j-1 {
				frac[i], frac[j] = frac[j], frac[i]
				species[i], species[j] = species[j], species[i]
			}
		case "sc":
			n := [3]int{int(x[0]), int(x[1]), int(x[2])}
			var sp []crystal.Element
			var fr []vec3
			for i, f := range frac {
				for k := range f {
					f[k] -= math.Floor(f[k])
				}
				for a := 0; a < n[0]; a++ {
					for b := 0; b < n[1]; b++ {
						for c := 0; c < n[2]; c++ {
							sp = append(sp, species[i])
							fr = append(fr, vec3{(f[0] + float64(a)) / float64(n[0]),
								(f[1] + float64(b)) / float64(n[1]), (f[2] + float64(c)) / float64(n[2])})
						}
					}
				}
			}
			species, frac = sp, fr
			for i := range lat {
				lat[i] = scale(float64(n[i]), lat[i])
			}
		case "strain":
			e := mat3{{1 + x[0], x[5], x[4]}, {x[5], 1 + x[1], x[3]}, {x[4], x[3], 1 + x[2]}}
			lat = matMul(lat, e)
		case "noise":
			inv, _ := inverse(lat)
			for i := range frac {
				j := float64(i + 1)
				c := add(rowTimes(frac[i], lat), scale(x[0], vec3{math.Sin(1.3 * j), math.Cos(2.1 * j), math.Sin(0.7*j + 1)}))
				frac[i] = rowTimes(c, inv)
			}
		default:
			return nil, fmt.Errorf("unknown transformation %q", op)
		}
	}
	l, err := crystal.NewLattice(lat)
	if err != nil {
		return nil, err
	}
	out := make([]crystal.Vec3, len(frac))
	for i, f := range frac {
		out[i] = crystal.Vec3(f)
	}
	return crystal.NewStructure(l, species, out)
}

// fixturePair is one row of testdata/pymatgen_fit.csv.
type fixturePair struct {
	a, ta, b, tb string
	fit          bool
	rms          float64 // NaN when pymatgen's get_rms_dist gave None
}

func readFixture(t testing.TB) []fixturePair {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pymatgen_fit.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []fixturePair
	for _, r := range rows[1:] {
		p := fixturePair{a: r[0], ta: r[1], b: r[2], tb: r[3], fit: r[4] == "true", rms: math.NaN()}
		if r[5] != "" {
			if p.rms, err = strconv.ParseFloat(r[5], 64); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, p)
	}
	return out
}

// TestAgreesWithPymatgen compares Match with pymatgen's
// StructureMatcher.fit (default options) on the pairs of
// testdata/pymatgen_fit.csv: hand-built structures against transformed
// copies and polymorphs (always), and pairs of Materials Project
// structures (with CRUCIBLE_DATA). Every disagreement is listed; the
// known ones, explained in knownDisagreements, are allowed. Where both
// find a mapping, the RMS displacements are compared too.
func TestAgreesWithPymatgen(t *testing.T) {
	pairs := readFixture(t)
	haveData := dataDir(t) != ""
	var n, agree, rmsCompared int
	type tally struct{ pairs, agree, fit int }
	byKind := map[string]*tally{}
	var kinds []string
	var worstRMS float64
	var worstRMSPair string
	cache := map[string]*Reduced{}
	reduce := func(name, tr string) *Reduced {
		key := name + "|" + tr
		if r, ok := cache[key]; ok {
			return r
		}
		s, err := transform(loadNamed(t, name), tr)
		if err != nil {
			t.Fatalf("%s %s: %v", name, tr, err)
		}
		r, err := Reduce(s, Options{})
		if err != nil {
			t.Fatalf("%s %s: %v", name, tr, err)
		}
		cache[key] = r
		return r
	}
	for _, p := range pairs {
		if !haveData && !(strings.HasPrefix(p.a, "hand:") && strings.HasPrefix(p.b, "hand:")) {
			continue
		}
		label := fmt.Sprintf("%s[%s] vs %s[%s]", p.a, p.ta, p.b, p.tb)
		res, err := MatchReduced(reduce(p.a, p.ta), reduce(p.b, p.tb), Options{})
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		n++
		kind := "MP"
		if strings.HasPrefix(p.a, "hand:") {
			kind = "hand-built"
		}
		if p.a == p.b {
			kind += ", transformed copy"
		} else {
			kind += ", two structures"
		}
		k := byKind[kind]
		if k == nil {
			k = &tally{}
			byKind[kind] = k
			kinds = append(kinds, kind)
		}
		k.pairs++
		if p.fit {
			k.fit++
		}
		if res.Match == p.fit {
			agree++
			k.agree++
		} else if why, ok := knownDisagreements[label]; ok {
			t.Logf("known disagreement: %s: pymatgen %v, got %v (max %.4f, rms %.4f): %s", label, p.fit, res.Match, res.Max, res.RMS, why)
		} else {
			t.Errorf("%s: pymatgen fit %v, got %v (max %.4f, rms %.4f, pymatgen rms %v, %d mappings)",
				label, p.fit, res.Match, res.Max, res.RMS, p.rms, res.Mappings)
		}
		if !math.IsNaN(p.rms) && res.RMS < DefaultSTol {
			rmsCompared++
			if d := math.Abs(res.RMS - p.rms); d > worstRMS {
				worstRMS, worstRMSPair = d, label
			}
		}
	}
	for _, kind := range kinds {
		k := byKind[kind]
		t.Logf("%-32s %4d pairs (%4d fit in pymatgen), %4d agree", kind, k.pairs, k.fit, k.agree)
	}
	t.Logf("agreement with pymatgen fit: %d/%d pairs; RMS compared on %d, largest difference %.2g (%s)",
		agree, n, rmsCompared, worstRMS, worstRMSPair)
	if worstRMS > 1e-3 {
		t.Errorf("RMS displacement differs from pymatgen's get_rms_dist by %.3g on %s", worstRMS, worstRMSPair)
	}
}

// knownDisagreements are the fixture pairs where Match and pymatgen
// differ for a documented reason (see the package doc).
var knownDisagreements = map[string]string{
	// mp-571195 is ZnTe in P3_1 (6 atoms): each atom lies 0.19 Å from where
	// the rhombohedral centring (⅓, ⅔, ⅔) of its hexagonal cell would put
	// it (at most 0.21 Å along a cell vector), and the three images average
	// to zinc blende. Within the 0.25 Å primitive tolerance, measured along
	// the Niggli cell's vectors, the cell reduces to 2 atoms and matches
	// zinc blende ZnTe (mp-2176) with a largest displacement of 0.0006; in
	// the Hermite-normal-form cell where pymatgen measures the same
	// tolerance, it does not, and 6 atoms never match 2.
	"piezo:mp-2176[] vs piezo:mp-571195[]": "primitive cell: P3_1 ZnTe within 0.25 Å of zinc blende (see comment)",
}
