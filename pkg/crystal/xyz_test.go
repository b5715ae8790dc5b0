package crystal

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// The hand-made extended XYZ files of testdata/xyz: ASE's layout with extra
// columns and keys, and one with atomic numbers, bracketed arrays and
// spaces around "=".
func TestParseXYZFixtures(t *testing.T) {
	tests := []struct {
		file    string
		formula string
		params  [6]float64
		site    int
		el      string
		frac    Vec3
	}{
		{"Si_diamond_ase.extxyz", "Si8", [6]float64{5.43, 5.43, 5.43, 90, 90, 90}, 7, "Si", Vec3{0.75, 0.75, 0.25}},
		{"ZnO_numbers.xyz", "Zn2 O2", [6]float64{3.2495, 3.2495, 5.2069, 90, 90, 120}, 3, "O", Vec3{2. / 3, 1. / 3, 0.8825}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s, err := ParseXYZ(readTestdata(t, "xyz", tc.file))
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
			if s.Species[tc.site].Symbol() != tc.el || !sameVec(s.Frac[tc.site], tc.frac, 1e-9) {
				t.Errorf("site %d: %s %v, want %s %v", tc.site, s.Species[tc.site], s.Frac[tc.site], tc.el, tc.frac)
			}
		})
	}
}

// A molecule, or a slab periodic in two dimensions, is not a crystal.
func TestParseXYZNotPeriodic(t *testing.T) {
	for _, file := range []string{"water_plain.xyz", "Pt_slab_pbc_TTF.extxyz"} {
		if s, err := ParseXYZ(readTestdata(t, "xyz", file)); !errors.Is(err, ErrNotPeriodic) || s != nil {
			t.Errorf("%s: %v, %v; want ErrNotPeriodic", file, s, err)
		}
	}
}

func TestParseXYZErrors(t *testing.T) {
	const lat = `Lattice="4 0 0 0 4 0 0 0 4"`
	tests := []struct {
		name, in string
		want     error
		msg      string
	}{
		{"empty", "", ErrBadXYZ, "number of atoms"},
		{"count not integer", "two\n", ErrBadXYZ, "line 1"},
		{"count and more", "2 atoms\n", ErrBadXYZ, "line 1"},
		{"zero atoms", "0\n" + lat + "\n", ErrBadStructure, "0 atoms"},
		{"negative atoms", "-1\n" + lat + "\n", ErrBadStructure, "atoms"},
		{"too many atoms", "5001\n" + lat + "\n", ErrTooManySites, "5000"},
		{"no comment line", "1\n", ErrBadXYZ, "comment line"},
		{"unclosed quote", "1\nLattice=\"4 0 0\nNa 0 0 0\n", ErrBadXYZ, "not closed"},
		{"unclosed bracket", "1\nLattice=[4, 0, 0\nNa 0 0 0\n", ErrBadXYZ, "not closed"},
		{"key without value", "1\n" + lat + " energy=\nNa 0 0 0\n", ErrBadXYZ, "no value"},
		{"lattice of 8", "1\nLattice=\"4 0 0 0 4 0 0 0\"\nNa 0 0 0\n", ErrBadXYZ, "8 values"},
		{"lattice not numbers", "1\nLattice=\"4 0 0 0 4 0 0 0 x\"\nNa 0 0 0\n", ErrBadXYZ, "Lattice"},
		{"flat lattice", "1\nLattice=\"4 0 0 0 4 0 0 0 0\"\nNa 0 0 0\n", ErrBadLattice, "coplanar"},
		{"lattice twice", "1\n" + lat + " lattice=\"1 0 0 0 1 0 0 0 1\"\nNa 0 0 0\n", ErrBadXYZ, "twice"},
		{"bad pbc", "1\n" + lat + " pbc=\"T T\"\nNa 0 0 0\n", ErrBadXYZ, "pbc"},
		{"pbc word", "1\n" + lat + " pbc=\"T T yes\"\nNa 0 0 0\n", ErrBadXYZ, "pbc"},
		{"no pos", "1\n" + lat + " Properties=species:S:1\nNa\n", ErrBadXYZ, "no pos"},
		{"no species", "1\n" + lat + " Properties=pos:R:3\n0 0 0\n", ErrBadXYZ, "no species"},
		{"pos as integers", "1\n" + lat + " Properties=species:S:1:pos:I:3\nNa 0 0 0\n", ErrBadXYZ, "want R:3"},
		{"bad type", "1\n" + lat + " Properties=species:S:1:pos:R:3:q:X:1\nNa 0 0 0 1\n", ErrBadXYZ, "type"},
		{"not triples", "1\n" + lat + " Properties=species:S:1:pos:R\nNa 0 0 0\n", ErrBadXYZ, "triples"},
		{"property twice", "1\n" + lat + " Properties=species:S:1:pos:R:3:pos:R:3\nNa 0 0 0 0 0 0\n", ErrBadXYZ, "twice"},
		{"huge column count", "1\n" + lat + " Properties=species:S:1:pos:R:3:f:R:99999999\nNa 0 0 0\n", ErrBadXYZ, "positive count"},
		{"too few atoms", "2\n" + lat + "\nNa 0 0 0\n", ErrBadXYZ, "after 1 of 2"},
		{"short atom line", "1\n" + lat + "\nNa 0 0\n", ErrBadXYZ, "3 fields, want 4"},
		{"long atom line", "1\n" + lat + "\nNa 0 0 0 0\n", ErrBadXYZ, "5 fields, want 4"},
		{"bad position", "1\n" + lat + "\nNa 0 0 inf\n", ErrBadXYZ, "pos"},
		{"bad integer column", "1\n" + lat + " Properties=species:S:1:pos:R:3:tag:I:1\nNa 0 0 0 1.5\n", ErrBadXYZ, "tag"},
		{"bad logical column", "1\n" + lat + " Properties=species:S:1:pos:R:3:fixed:L:1\nNa 0 0 0 maybe\n", ErrBadXYZ, "fixed"},
		{"unknown element", "1\n" + lat + "\nXx 0 0 0\n", ErrUnknownElement, "line 3"},
		{"atomic number 0", "1\n" + lat + " Properties=Z:I:1:pos:R:3\n0 0 0 0\n", ErrUnknownElement, "line 3"},
		{"two frames", "1\n" + lat + "\nNa 0 0 0\n1\n" + lat + "\nCl 0 0 0\n", ErrBadXYZ, "second frame"},
		{"overflowing position", "1\nLattice=\"0.1 0 0 0 0.1 0 0 0 0.1\"\nNa 1e308 0 0\n", ErrBadStructure, "Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseXYZ([]byte(tc.in))
			if !errors.Is(err, tc.want) || s != nil {
				t.Fatalf("got %v, %v; want error %v", s, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
}

func TestParseKeyValues(t *testing.T) {
	tests := []struct {
		in   string
		want []keyValue
	}{
		{`a=1 b="x y" c = {1 2} d=[[1, 2], [3]] flag "quoted key"=v e="esc \" \\ \n"`,
			[]keyValue{{"a", "1"}, {"b", "x y"}, {"c", "1 2"}, {"d", "[1, 2], [3]"}, {"flag", ""}, {"quoted key", "v"}, {"e", "esc \" \\ \n"}}},
		{"  \t", nil},
		{"Cubic bulk silicon cell", []keyValue{{"Cubic", ""}, {"bulk", ""}, {"silicon", ""}, {"cell", ""}}},
	}
	for _, tc := range tests {
		got, err := parseKeyValues(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: pair %d = %q, want %q", tc.in, i, got[i], tc.want[i])
			}
		}
	}
	for _, bad := range []string{`a="open`, `a={1 2`, `a=[[1]`, `a=`, `a"b=1`, `a="x\`, `=1`} {
		if _, err := parseKeyValues(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// WriteXYZ's layout, and frames written one after another read back as a
// trajectory.
func TestWriteXYZ(t *testing.T) {
	l, err := NewLattice([3][3]float64{{4, 0, 0}, {0, 4.5, 0}, {-0.5, 0, 5}})
	if err != nil {
		t.Fatal(err)
	}
	na, cl := MustElement("Na"), MustElement("Cl")
	s, err := NewStructure(l, []Element{na, cl}, []Vec3{{0, 0, math.Copysign(0, -1)}, {0.5, 0.5, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteXYZ(&buf, s, `run "7"`+"\n"); err != nil {
		t.Fatal(err)
	}
	want := `2
Lattice="4.0000000000000000 0.0000000000000000 0.0000000000000000 0.0000000000000000 4.5000000000000000 0.0000000000000000 -0.5000000000000000 0.0000000000000000 5.0000000000000000" Properties=species:S:1:pos:R:3 pbc="T T T" title="run \"7\""
Na     0.0000000000000000     0.0000000000000000     0.0000000000000000
Cl     1.7500000000000000     2.2500000000000000     2.5000000000000000
`
	if buf.String() != want {
		t.Errorf("WriteXYZ:\n%s\nwant:\n%s", buf.String(), want)
	}
	if err := WriteXYZ(&buf, s, ""); err != nil {
		t.Fatal(err)
	}
	frames, err := ParseXYZFrames(append(buf.Bytes(), "\n\n"...))
	if err != nil || len(frames) != 2 {
		t.Fatalf("ParseXYZFrames: %d frames, %v", len(frames), err)
	}
	for _, f := range frames {
		requireSameStructure(t, f, s, 1e-10, true)
	}
	if _, err := ParseXYZFrames(append(buf.Bytes(), "1\n"...)); !errors.Is(err, ErrBadXYZ) || !strings.Contains(err.Error(), "frame 3") {
		t.Errorf("truncated third frame: %v", err)
	}
	for _, bad := range []*Structure{nil, {}} {
		if err := WriteXYZ(&bytes.Buffer{}, bad, ""); !errors.Is(err, ErrBadStructure) {
			t.Errorf("WriteXYZ(%v): error %v, want ErrBadStructure", bad, err)
		}
	}
}

// The spellings of a lattice and pbc that ASE and the extxyz library
// write: quoted, in braces, as a flat or nested array; T/F or True/False;
// keys in any case.
func TestParseXYZLatticeSpellings(t *testing.T) {
	for _, header := range []string{
		`Lattice="4 0 0 0 5 0 0 0 6"`,
		`lattice={4 0 0 0 5 0 0 0 6} PBC="T T T"`,
		`Lattice=[4, 0, 0, 0, 5, 0, 0, 0, 6] pbc=[True, true, T]`,
		`Lattice=[[4, 0, 0], [0, 5, 0], [0, 0, 6]] Properties=species:S:1:pos:R:3`,
		`energy=-1.5 "Lattice" = "4.0D0 0 0 0 5 0 0 0 6" pbc="T T T" is_relaxed`,
	} {
		s, err := ParseXYZ([]byte("1\n" + header + "\nNa 2 2.5 3\n"))
		if err != nil {
			t.Errorf("%s: %v", header, err)
			continue
		}
		if m := s.Lattice.Matrix(); m != [3][3]float64{{4, 0, 0}, {0, 5, 0}, {0, 0, 6}} || s.Frac[0] != (Vec3{0.5, 0.5, 0.5}) {
			t.Errorf("%s: lattice %v, site %v", header, m, s.Frac[0])
		}
	}
}
