package novelty

import (
	"errors"
	"github.com/crucible-sci/crucible/internal/testbed"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/match"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// dataRoot is the data folder; tests that need it skip when there is none.
func dataRoot(t testing.TB) string {
	t.Helper()
	return testbed.DataDir(t)
}

var refDB = sync.OnceValues(func() (*reference.DB, error) {
	return reference.Load(filepath.Join(os.Getenv("CRUCIBLE_DATA"), "data"))
})

func standardIndex(t testing.TB) *Index {
	t.Helper()
	root := dataRoot(t)
	db, err := refDB()
	if err != nil {
		t.Fatal(err)
	}
	return NewIndex(Standard(root, TableCounts(db)))
}

func build(t testing.TB, proto, formula string) *crystal.Structure {
	t.Helper()
	p, err := crystal.PrototypeByName(proto)
	if err != nil {
		t.Fatal(err)
	}
	b, err := crystal.Build(p, crystal.MustParseFormula(formula))
	if err != nil {
		t.Fatal(err)
	}
	return b.Structure
}

// Every known structure reads, its CIF's formula is the one it is filed
// under, it reduces, and every archetype's formula is a Materials Project
// compound.
func TestSourcesRead(t *testing.T) {
	ix := standardIndex(t)
	if err := ix.Load(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d known structures of %d formulas", ix.Len(), ix.Formulas())
	db, _ := refDB()
	perSource := map[string]int{}
	for f, slots := range ix.byF {
		for _, sl := range slots {
			perSource[sl.ref.Source]++
			s, err := sl.load()
			if err != nil {
				t.Errorf("%s: %v", sl.ref, err)
				continue
			}
			if got := s.Composition().ReducedFormula(); got != f {
				t.Errorf("%s: filed under %s, structure is %s", sl.ref, f, got)
			}
			if _, err := sl.reduced(match.Options{}); err != nil {
				t.Errorf("%s: %v", sl.ref, err)
			}
			if sl.ref.Source == SourcePrototype && !db.Known(f) {
				t.Errorf("archetype %s is not in the reference tables", sl.ref)
			}
		}
	}
	t.Logf("per source: %v", perSource)
	if perSource[SourceDielectric] != 1056 || perSource[SourcePiezo] != 941 || perSource[SourceGolden] != 39 {
		t.Errorf("per source %v, want 1056 dielectric, 941 piezoelectric, 39 golden", perSource)
	}
}

// otherPhases are archetypes whose only known structures of as many
// primitive sites are another phase, which they must not match.
var otherPhases = map[string]string{
	"rocksalt/KCl": "only cod-1000050, the high-pressure CsCl-type phase (Pm-3m, a = 3.634 Å)",
}

// An archetype built by the prototype library matches the real structure
// wherever a known structure of its formula has as many primitive sites:
// the ideal cells are within the matcher's tolerances of the real ones.
func TestArchetypesMatchRealStructures(t *testing.T) {
	ix := standardIndex(t)
	if err := ix.Load(); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, formulas := range Archetypes {
		for _, f := range formulas {
			arch := build(t, name, f)
			r, err := match.Reduce(arch, match.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var same []Ref
			matched := false
			for _, sl := range ix.byF[r.Formula()] {
				if sl.ref.Source == SourcePrototype {
					continue
				}
				known, err := sl.reduced(match.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if known.Key() != r.Key() {
					continue
				}
				same = append(same, sl.ref)
				res, err := match.MatchReduced(r, known, match.Options{})
				if err != nil {
					t.Fatal(err)
				}
				matched = matched || res.Match
			}
			if len(same) == 0 {
				continue
			}
			checked++
			if why, ok := otherPhases[name+"/"+f]; ok {
				if matched {
					t.Errorf("%s/%s matches %v, which holds %s", name, f, same, why)
				}
				continue
			}
			if !matched {
				t.Errorf("%s/%s matches none of %v", name, f, same)
			}
		}
	}
	t.Logf("%d archetypes compared with real structures", checked)
	if checked < 10 {
		t.Errorf("only %d archetypes have a real structure to compare with", checked)
	}
}

// rotate turns the cell by 40° about (1, 2, 2)/3, moves the origin and
// reverses the site order.
func rotate(s *crystal.Structure) (*crystal.Structure, error) {
	u := [3]float64{1.0 / 3, 2.0 / 3, 2.0 / 3}
	sn, cs := math.Sincos(40 * math.Pi / 180)
	m := s.Lattice.Matrix()
	var out [3][3]float64
	for i, v := range m {
		// Rodrigues: v cos θ + (u × v) sin θ + u (u·v)(1 − cos θ).
		uv := u[0]*v[0] + u[1]*v[1] + u[2]*v[2]
		cr := [3]float64{u[1]*v[2] - u[2]*v[1], u[2]*v[0] - u[0]*v[2], u[0]*v[1] - u[1]*v[0]}
		for k := range v {
			out[i][k] = v[k]*cs + cr[k]*sn + u[k]*uv*(1-cs)
		}
	}
	l, err := crystal.NewLattice(out)
	if err != nil {
		return nil, err
	}
	n := s.NumSites()
	species := make([]crystal.Element, n)
	frac := make([]crystal.Vec3, n)
	for i := range frac {
		species[n-1-i] = s.Species[i]
		frac[n-1-i] = s.Frac[i].Add(crystal.Vec3{0.31, 0.17, 0.89})
	}
	return crystal.NewStructure(l, species, frac)
}

func TestClassify(t *testing.T) {
	ix := standardIndex(t)
	db, _ := refDB()
	read := func(file string) *crystal.Structure {
		s, err := crystal.ReadFile(filepath.Join(dataRoot(t), "golden", "cgcnn", "cifs", file))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// LiF in rock salt at 2.0 g/cm³ (real LiF: 2.64): scaling makes
	// density no part of the structure.
	lif := build(t, "rocksalt", "LiF")
	lif, err := lif.ScaledToVolume(lif.Volume() * lif.Density() / 2.0)
	if err != nil {
		t.Fatal(err)
	}
	// The P1 copy of a COD CIF (not indexed itself), turned and shuffled.
	nacl, err := rotate(read("icsd-1000041.cif"))
	if err != nil {
		t.Fatal(err)
	}
	if db.Known("NaLiF2") || !db.Known("CsLiF2") {
		t.Fatalf("the reference tables changed: NaLiF2 known %v, CsLiF2 known %v", db.Known("NaLiF2"), db.Known("CsLiF2"))
	}
	for _, tc := range []struct {
		name  string
		s     *crystal.Structure
		kind  Kind
		match Ref // for Known; zero: any
		poly  Ref // a structure Polymorphs must list; zero: none
	}{
		{"NaCl, a turned P1 copy of a COD CIF", nacl, Known, Ref{"cod-1000041", SourceGolden}, Ref{"rocksalt/NaCl", SourcePrototype}},
		{"LiF rock salt at 2.0 g/cm³", lif, Known, Ref{"rocksalt/LiF", SourcePrototype}, Ref{}},
		{"LiF in the CsCl type", build(t, "cscl", "LiF"), NewPolymorph, Ref{}, Ref{"rocksalt/LiF", SourcePrototype}},
		{"TiO2 anatase, P1 copy", read("icsd-7206075.cif"), Known, Ref{"cod-7206075", SourceGolden}, Ref{"rutile/TiO2", SourcePrototype}},
		{"TiO2 in the CdI2 type", build(t, "cdi2", "TiO2"), NewPolymorph, Ref{}, Ref{"cod-7206075", SourceGolden}},
		{"ZnS wurtzite", build(t, "wurtzite", "ZnS"), Known, Ref{}, Ref{"zincblende/ZnS", SourcePrototype}},
		{"CsLiF2, in the tables, no structure held", build(t, "nafeo2", "CsLiF2"), KnownFormula, Ref{}, Ref{}},
		{"NaLiF2, nowhere", build(t, "nafeo2", "NaLiF2"), New, Ref{}, Ref{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ix.Classify(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind != tc.kind {
				t.Fatalf("%v (%+v), want %v", v.Kind, v, tc.kind)
			}
			if tc.match != (Ref{}) && v.Match != tc.match {
				t.Errorf("matched %v, want %v", v.Match, tc.match)
			}
			if v.Kind == Known && !(v.RMS >= 0 && v.RMS < match.DefaultSTol) {
				t.Errorf("rms %v", v.RMS)
			}
			if tc.poly != (Ref{}) && !slices.Contains(v.Polymorphs, tc.poly) {
				t.Errorf("polymorphs %v lack %v", v.Polymorphs, tc.poly)
			}
			if (v.Kind == New) != (v.TableEntries == 0 && len(v.Polymorphs) == 0) {
				t.Errorf("kind %v with %d table entries and %d structures", v.Kind, v.TableEntries, len(v.Polymorphs))
			}
			t.Logf("%v %v (rms %.3g); %d structures held, %d table entries", v.Kind, v.Match, v.RMS, len(v.Polymorphs), v.TableEntries)
		})
	}
}

func TestIndexErrors(t *testing.T) {
	dir := t.TempDir()
	missing := NewIndex(Config{CIFTables: []CIFTable{{filepath.Join(dir, "none.csv"), "x"}}})
	if err := missing.Load(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing table: %v", err)
	}
	if _, err := missing.Classify(build(t, "rocksalt", "NaCl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("classify after a failed load: %v", err)
	}
	for name, content := range map[string]string{
		"no cif column": "material_id,formula\nmp-1,NaCl\n",
		"bad formula":   "material_id,formula,cif\nmp-1,Xx2,data_x\n",
		"empty cif":     "material_id,formula,cif\nmp-1,NaCl,\n",
	} {
		path := filepath.Join(dir, "t.csv")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		ix := NewIndex(Config{CIFTables: []CIFTable{{path, "x"}}})
		if err := ix.Load(); !errors.Is(err, ErrBadSource) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A CIF that does not parse is reported when a candidate needs it.
	path := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(path, []byte("material_id,formula,cif\nmp-1,NaCl,\"data_x\n_cell_length_a 5\n\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(Config{CIFTables: []CIFTable{{path, "x"}}})
	if err := ix.Load(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Classify(build(t, "rocksalt", "NaCl")); !errors.Is(err, ErrBadSource) {
		t.Errorf("unparsable CIF: %v", err)
	}
	// An empty configuration knows nothing.
	v, err := NewIndex(Config{}).Classify(build(t, "rocksalt", "NaCl"))
	if err != nil || v.Kind != New {
		t.Errorf("empty index: %+v, %v", v, err)
	}
}

// BenchmarkLoad times reading the standard sources (no CIF parsed).
func BenchmarkLoad(b *testing.B) {
	root := dataRoot(b)
	for b.Loop() {
		if err := NewIndex(Standard(root, nil)).Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassify times Classify on a warm index (known structures
// already reduced) over the MP sets' structures, each turned and shuffled:
// one op is one candidate, most of them Known.
func BenchmarkClassify(b *testing.B) {
	ix := standardIndex(b)
	if err := ix.Load(); err != nil {
		b.Fatal(err)
	}
	var cands []*crystal.Structure
	for _, slots := range ix.byF {
		for _, sl := range slots {
			if sl.ref.Source != SourceDielectric {
				continue
			}
			s, err := sl.load()
			if err != nil {
				b.Fatal(err)
			}
			r, err := rotate(s)
			if err != nil {
				b.Fatal(err)
			}
			cands = append(cands, r)
		}
	}
	for _, c := range cands { // warm
		if _, err := ix.Classify(c); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		if _, err := ix.Classify(cands[i%len(cands)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkFirstUse times what a known structure costs the first time a
// candidate of its formula needs it: parsing its CIF and reducing it. One
// op is one structure of the MP sets.
func BenchmarkFirstUse(b *testing.B) {
	ix := standardIndex(b)
	if err := ix.Load(); err != nil {
		b.Fatal(err)
	}
	var entries []*entry
	for _, slots := range ix.byF {
		for _, sl := range slots {
			if sl.ref.Source == SourceDielectric || sl.ref.Source == SourcePiezo {
				entries = append(entries, sl.entry)
			}
		}
	}
	i := 0
	for b.Loop() {
		sl := &slot{entry: entries[i%len(entries)]}
		if _, err := sl.reduced(match.Options{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
