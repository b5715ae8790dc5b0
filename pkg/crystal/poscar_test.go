package crystal

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// The hand-made POSCARs of testdata/poscar, read with their expected
// formula, cell and a few sites.
func TestParsePOSCARFixtures(t *testing.T) {
	type site struct {
		i    int
		el   string
		frac Vec3
	}
	tests := []struct {
		file    string
		formula string // Composition().Formula()
		params  [6]float64
		volume  float64
		sites   []site
	}{
		{"POSCAR_MgO_slab_selective", "Mg4 O4",
			[6]float64{2.97875802642645, 2.97875802642645, 23.4252, 90, 90, 90}, 2.97875802642645 * 2.97875802642645 * 23.4252,
			[]site{{0, "Mg", Vec3{0, 0, 0}}, {3, "Mg", Vec3{0.5, 0.5, 0.2697479637313662}}, {4, "O", Vec3{0.5, 0.5, 0}}, {7, "O", Vec3{0, 0, 0.2697479637313662}}}},
		// Cartesian positions are scaled by line 2, as the lattice is.
		{"POSCAR_NaCl_cartesian", "Na1 Cl1",
			[6]float64{5.64 / math.Sqrt2, 5.64 / math.Sqrt2, 5.64 / math.Sqrt2, 60, 60, 60}, 5.64 * 5.64 * 5.64 / 4,
			[]site{{0, "Na", Vec3{0, 0, 0}}, {1, "Cl", Vec3{0.5, 0.5, 0.5}}}},
		// Velocities and predictor-corrector blocks after the positions are
		// read past.
		{"CONTCAR_Si_md", "Si8",
			[6]float64{5.468728, 5.468728, 5.468728, 90, 90, 90}, 5.468728 * 5.468728 * 5.468728,
			[]site{{0, "Si", Vec3{0.0012345678901234, 0.9991234567890123, 0.0003456789012345}}, {7, "Si", Vec3{0.2512345678901234, 0.7491234567890123, 0.7503456789012345}}}},
		// A negative scale is the volume; "direct" in lower case.
		{"POSCAR_Cu_volume", "Cu4",
			[6]float64{math.Cbrt(47.2364), math.Cbrt(47.2364), math.Cbrt(47.2364), 90, 90, 90}, 47.2364,
			[]site{{1, "Cu", Vec3{0, 0.5, 0.5}}}},
		// Species with POTCAR suffixes, as VASP 6 writes them.
		{"POSCAR_TiO2_vasp6", "Ti2 O4",
			[6]float64{4.594, 4.594, 2.959, 90, 90, 90}, 4.594 * 4.594 * 2.959,
			[]site{{1, "Ti", Vec3{0.5, 0.5, 0.5}}, {2, "O", Vec3{0.3049, 0.3049, 0}}}},
		// VASP 4: no species line, the symbols on the comment line (ASE's
		// convention).
		{"POSCAR_ZnO_vasp4", "Zn2 O2",
			[6]float64{3.2495, 3.2495, 5.2069, 90, 90, 120}, 3.2495 * 2.8141495495975333 * 5.2069,
			[]site{{0, "Zn", Vec3{1. / 3, 2. / 3, 0}}, {3, "O", Vec3{2. / 3, 1. / 3, 0.8825}}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s, err := ParsePOSCAR(readTestdata(t, "poscar", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Composition().Formula(); got != tc.formula {
				t.Errorf("formula %s, want %s", got, tc.formula)
			}
			var p [6]float64
			p[0], p[1], p[2], p[3], p[4], p[5] = s.Lattice.Parameters()
			for i := range p {
				if math.Abs(p[i]-tc.params[i]) > 1e-9 {
					t.Errorf("lattice parameter %d = %.12g, want %.12g", i, p[i], tc.params[i])
				}
			}
			if math.Abs(s.Volume()-tc.volume) > 1e-9*tc.volume {
				t.Errorf("volume %.12g, want %.12g", s.Volume(), tc.volume)
			}
			for _, st := range tc.sites {
				if s.Species[st.i].Symbol() != st.el || !sameVec(s.Frac[st.i], st.frac, 1e-12) {
					t.Errorf("site %d: %s %v, want %s %v", st.i, s.Species[st.i], s.Frac[st.i], st.el, st.frac)
				}
			}
		})
	}
}

// A VASP 4 file whose species appear nowhere is refused with a reason, and
// read once they are given.
func TestParsePOSCARVASP4NeedsSpecies(t *testing.T) {
	data := readTestdata(t, "poscar", "POSCAR_ZnO_vasp4_nospecies")
	if _, err := ParsePOSCAR(data); !errors.Is(err, ErrNoSpecies) {
		t.Fatalf("error %v, want ErrNoSpecies", err)
	}
	zn, o := MustElement("Zn"), MustElement("O")
	s, err := POSCAROptions{Species: []Element{zn, o}}.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Composition().Formula(); got != "Zn2 O2" {
		t.Errorf("formula %s", got)
	}
	if _, err := (POSCAROptions{Species: []Element{zn}}).Parse(data); !errors.Is(err, ErrBadPOSCAR) {
		t.Errorf("one species for two groups: error %v, want ErrBadPOSCAR", err)
	}
	// pymatgen's convention: the element after each position.
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		b.WriteString(l)
		if i >= 7 {
			b.WriteString([]string{" Zn", " Zn", " O", " O"}[i-7])
		}
		b.WriteString("\n")
	}
	if s, err := ParsePOSCAR([]byte(b.String())); err != nil || s.Composition().Formula() != "Zn2 O2" {
		t.Errorf("symbols after positions: %v, %v", s, err)
	}
	// A species line that disagrees with the given species.
	vasp5 := readTestdata(t, "poscar", "POSCAR_TiO2_vasp6")
	if _, err := (POSCAROptions{Species: []Element{MustElement("Zr"), o}}).Parse(vasp5); !errors.Is(err, ErrBadPOSCAR) {
		t.Errorf("disagreeing species: error %v, want ErrBadPOSCAR", err)
	}
}

// Three scaling factors scale the Cartesian axes, positions included.
func TestParsePOSCARPerAxisScale(t *testing.T) {
	s, err := ParsePOSCAR([]byte("x\n2 3 4\n1 0 0\n0 1 0\n0 0 1\nNa\n1\nCartesian\n0.5 0.5 0.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c, _, _, _ := s.Lattice.Parameters()
	if a != 2 || b != 3 || c != 4 || !sameVec(s.Frac[0], Vec3{0.5, 0.5, 0.25}, 1e-15) {
		t.Errorf("cell %g %g %g, site %v", a, b, c, s.Frac[0])
	}
}

func TestParsePOSCARErrors(t *testing.T) {
	const head = "c\n1.0\n4 0 0\n0 4 0\n0 0 4\n"
	tests := []struct {
		name, in string
		want     error
		msg      string
	}{
		{"empty", "", ErrBadPOSCAR, "empty"},
		{"no scale", "c\n", ErrBadPOSCAR, "scaling factor"},
		{"two scales", "c\n1 2\n", ErrBadPOSCAR, "one number or three"},
		{"zero scale", "c\n0\n4 0 0\n0 4 0\n0 0 4\nNa\n1\nD\n0 0 0\n", ErrBadPOSCAR, "zero"},
		{"negative axis scale", "c\n1 -1 1\n4 0 0\n0 4 0\n0 0 4\nNa\n1\nD\n0 0 0\n", ErrBadPOSCAR, "positive"},
		{"volume of flat cell", "c\n-10\n1 0 0\n0 1 0\n0 0 0\nNa\n1\nD\n0 0 0\n", ErrBadLattice, "volume"},
		{"short lattice", "c\n1.0\n4 0\n", ErrBadPOSCAR, "line 3"},
		{"nan", "c\n1.0\nnan 0 0\n", ErrBadPOSCAR, "line 3"},
		{"inf", "c\n1.0\n1e999 0 0\n", ErrBadPOSCAR, "finite"},
		{"hex float", "c\n1.0\n0x1p2 0 0\n", ErrBadPOSCAR, "line 3"},
		{"coplanar", "c\n1.0\n4 0 0\n0 4 0\n4 4 0\nNa\n1\nD\n0 0 0\n", ErrBadLattice, "coplanar"},
		{"unknown species", head + "Xx\n1\nD\n0 0 0\n", ErrUnknownElement, "line 6"},
		{"lower-case species", head + "na\n1\nD\n0 0 0\n", ErrUnknownElement, "line 6"},
		{"missing counts", head + "Na\n", ErrBadPOSCAR, "counts"},
		{"zero count", head + "Na\n0\nD\n", ErrBadPOSCAR, "positive integer"},
		{"fractional count", head + "Na\n1.5\nD\n0 0 0\n", ErrBadPOSCAR, "positive integer"},
		{"count mismatch", head + "Na Cl\n1\nD\n0 0 0\n", ErrBadPOSCAR, "1 counts for 2 species"},
		{"too many", head + "Na Cl\n4000 4000\nD\n", ErrTooManySites, "5000"},
		{"huge count", head + "Na\n99999999999999999999\nD\n", ErrBadPOSCAR, "positive integer"},
		{"no mode", head + "Na\n1\n", ErrBadPOSCAR, "coordinate mode"},
		{"bad mode", head + "Na\n1\n0 0 0\n", ErrBadPOSCAR, "not a coordinate mode"},
		{"blank mode", head + "Na\n1\n\n0 0 0\n", ErrBadPOSCAR, "blank"},
		{"too few positions", head + "Na\n2\nDirect\n0 0 0\n", ErrBadPOSCAR, "position 2 of 2"},
		{"short position", head + "Na\n1\nDirect\n0 0\n", ErrBadPOSCAR, "2 fields"},
		{"bad position", head + "Na\n1\nDirect\n0 zero 0\n", ErrBadPOSCAR, "line 9"},
		{"missing flags", head + "Na\n1\nSelective dynamics\nDirect\n0 0 0\n", ErrBadPOSCAR, "want 6"},
		{"bad flag", head + "Na\n1\nSelective dynamics\nDirect\n0 0 0 T X T\n", ErrBadPOSCAR, "flag"},
		{"overflowing position", head + "Na\n1\nDirect\n1e308 0 0\n", ErrBadStructure, "overflow"},
		{"overflowing cell", "c\n1e200\n1e200 0 0\n0 1e200 0\n0 0 1e200\nNa\n1\nD\n0 0 0\n", ErrBadLattice, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParsePOSCAR([]byte(tc.in))
			if !errors.Is(err, tc.want) || s != nil {
				t.Fatalf("got %v, %v; want error %v", s, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
}

// Lenient spellings VASP accepts: Fortran D exponents, .TRUE./.FALSE.
// flags, inline comments, CRLF line ends and a byte-order mark, K for
// Cartesian.
func TestParsePOSCARSpellings(t *testing.T) {
	in := "\ufeffNaCl\r\n1.0D0 ! scale\r\n5.64 0 0\r\n0 5.64 0\r\n0 0 5.64\r\nNa Cl ! species\r\n1 1 # counts\r\n" +
		"sel\r\nK\r\n0 0 0 .TRUE. .false. T\r\n2.82D0 2.82 2.82 F F F Cl\r\n"
	s, err := ParsePOSCAR([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.Composition().Formula() != "Na1 Cl1" || !sameVec(s.Frac[1], Vec3{0.5, 0.5, 0.5}, 1e-15) {
		t.Errorf("read %s, Cl at %v", s.Composition().Formula(), s.Frac[1])
	}
}

// WritePOSCAR's layout: a VASP 5 file with the elements in the order of
// the sites, repeated groups kept.
func TestWritePOSCARLayout(t *testing.T) {
	l, err := NewLattice([3][3]float64{{4, 0, 0}, {0, 4.5, 0}, {-0.5, 0, 5}})
	if err != nil {
		t.Fatal(err)
	}
	na, cl := MustElement("Na"), MustElement("Cl")
	s, err := NewStructure(l, []Element{na, na, cl, na}, []Vec3{{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, math.Copysign(0, -1)}, {1.25, -0.125, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePOSCAR(&buf, s, "two\nlines"); err != nil {
		t.Fatal(err)
	}
	want := `two lines
1.0
   4.0000000000000000    0.0000000000000000    0.0000000000000000
   0.0000000000000000    4.5000000000000000    0.0000000000000000
  -0.5000000000000000    0.0000000000000000    5.0000000000000000
Na Cl Na
2 1 1
Direct
   0.0000000000000000    0.0000000000000000    0.0000000000000000 Na
   0.5000000000000000    0.5000000000000000    0.0000000000000000 Na
   0.5000000000000000    0.0000000000000000    0.0000000000000000 Cl
   1.2500000000000000   -0.1250000000000000    0.5000000000000000 Na
`
	if buf.String() != want {
		t.Errorf("WritePOSCAR:\n%s\nwant:\n%s", buf.String(), want)
	}
	back, err := ParsePOSCAR(buf.Bytes())
	if err != nil || !back.Identical(s) {
		t.Errorf("read back %v, %v", back, err)
	}
	buf.Reset()
	if err := WritePOSCAR(&buf, s, ""); err != nil || !strings.HasPrefix(buf.String(), "Na3 Cl1\n") {
		t.Errorf("default comment: %q, %v", strings.SplitN(buf.String(), "\n", 2)[0], err)
	}
	for _, bad := range []*Structure{nil, {}, {Lattice: l, Species: []Element{0}, Frac: []Vec3{{}}}} {
		if err := WritePOSCAR(&bytes.Buffer{}, bad, ""); !errors.Is(err, ErrBadStructure) {
			t.Errorf("WritePOSCAR(%v): error %v, want ErrBadStructure", bad, err)
		}
	}
}

func sameVec(a, b Vec3, tol float64) bool {
	for k := range a {
		if math.Abs(a[k]-b[k]) > tol {
			return false
		}
	}
	return true
}
