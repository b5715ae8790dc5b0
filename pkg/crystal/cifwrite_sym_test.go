package crystal

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// checkSymmetrizedRoundTrip writes s with its space group, reads the CIF
// back, and checks that the result is the standard conventional cell of s
// (same sites within tol Å per coordinate on the standard cell) with the
// same space group, and that the file lists the asymmetric unit only.
func checkSymmetrizedRoundTrip(t *testing.T, s *Structure, tol float64) {
	t.Helper()
	opt := spacegroup.Options{SymPrec: 0.01}
	var buf bytes.Buffer
	if err := WriteSymmetrizedCIF(&buf, s, opt); err != nil {
		t.Fatal(err)
	}
	ds, err := s.SpaceGroup(opt)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCIF(buf.Bytes())
	if err != nil {
		t.Fatalf("reading back: %v\n%s", err, buf.String())
	}
	lat, err := NewLattice(ds.StdLattice)
	if err != nil {
		t.Fatal(err)
	}
	species := make([]Element, len(ds.StdTypes))
	frac := make([]Vec3, len(ds.StdFrac))
	for i := range species {
		species[i], frac[i] = Element(ds.StdTypes[i]), ds.StdFrac[i]
	}
	std, err := NewStructure(lat, species, frac)
	if err != nil {
		t.Fatal(err)
	}
	requireSitesMatch(t, back, std, tol)
	a, b, c, al, be, ga := back.Lattice.Parameters()
	p := ds.StdParameters()
	for i, x := range []float64{a, b, c, al, be, ga} {
		if d := x - p[i]; d > 1e-6 || d < -1e-6 {
			t.Errorf("cell parameter %d: read %g, written %g", i, x, p[i])
		}
	}
	ds2, err := back.SpaceGroup(opt)
	if err != nil || ds2.Number != ds.Number {
		t.Errorf("read back: space group %v, %v; want %d", ds2, err, ds.Number)
	}
	asym, _ := ds.AsymmetricUnit()
	if got := strings.Count(buf.String(), "\n  ") - len(ds.Setting.Ops()); got != len(asym) {
		t.Errorf("%d atom rows, want %d", got, len(asym))
	}
}

func TestWriteSymmetrizedCIF(t *testing.T) {
	for _, f := range []string{"rutile_symop.cif", "wurtzite_zno.cif", "symbol_nacl_number.cif", "symbol_p21c_ops.cif", "symbol_bi2te3_hm.cif"} {
		t.Run(f, func(t *testing.T) {
			s, err := ParseCIF(readTestdata(t, "cif", f))
			if err != nil {
				t.Fatal(err)
			}
			checkSymmetrizedRoundTrip(t, s, 1e-6)
		})
	}
}

// TestWriteSymmetrizedCIFGolden round-trips the 51 structures of the golden
// set (symmetric, primitive, supercell and distorted ones).
func TestWriteSymmetrizedCIFGolden(t *testing.T) {
	dir := testbed.DataPath(t, "golden", "cgcnn", "cifs")
	files, _ := filepath.Glob(filepath.Join(dir, "*.cif"))
	if len(files) == 0 {
		t.Skip("no golden CIFs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseCIF(data)
			if err != nil {
				t.Fatal(err)
			}
			// Positions move by up to symprec when made exact.
			checkSymmetrizedRoundTrip(t, s, 0.01)
		})
	}
}

func TestWriteSymmetrizedCIFErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSymmetrizedCIF(&buf, &Structure{}, spacegroup.Options{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("empty structure: %v", err)
	}
}

// TestWriteSymmetrizedCIFMaterialsProject writes each structure of the MP
// dielectric and piezoelectric sets with its group found at 0.01 Å and at
// 0.1 Å, reads it back and requires the standard cell's atom count and the
// same group found again at 1e-4 Å: the written positions are exactly
// symmetric.
func TestWriteSymmetrizedCIFMaterialsProject(t *testing.T) {
	if testing.Short() {
		t.Skip("about 4,000 round trips")
	}
	n, bad := 0, 0
	for _, file := range []string{"mp_dielectric_petousis2017.csv", "mp_piezo_dejong2015.csv"} {
		f, err := os.Open(testbed.DataPath(t, "data", file))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for _, r := range rows[1:] {
			s, err := ParseCIF([]byte(r[col["cif"]]))
			if err != nil {
				t.Fatalf("%s: %v", r[col["material_id"]], err)
			}
			for _, tol := range []float64{0.01, 0.1} {
				n++
				opt := spacegroup.Options{SymPrec: tol}
				ds, err := s.SpaceGroup(opt)
				if err != nil {
					t.Fatalf("%s: %v", r[col["material_id"]], err)
				}
				var buf bytes.Buffer
				if err := WriteSymmetrizedCIF(&buf, s, opt); err != nil {
					bad++
					t.Errorf("%s at %g Å: %v", r[col["material_id"]], tol, err)
					continue
				}
				back, err := ParseCIF(buf.Bytes())
				if err != nil {
					bad++
					t.Errorf("%s at %g Å: reading back: %v", r[col["material_id"]], tol, err)
					continue
				}
				ds2, err := back.SpaceGroup(spacegroup.Options{SymPrec: 1e-4})
				if err != nil || ds2.Number != ds.Number || back.NumSites() != len(ds.StdFrac) {
					bad++
					t.Errorf("%s at %g Å: read back %d sites (standard cell %d), group %v %v, want %d",
						r[col["material_id"]], tol, back.NumSites(), len(ds.StdFrac), ds2, err, ds.Number)
				}
			}
		}
	}
	t.Logf("%d/%d symmetrised round trips keep the group", n-bad, n)
}
