package spacegroup

import (
	"errors"
	"sort"
	"strings"
	"testing"
)

// pointGroupOrder is the order of each crystallographic point group, keyed
// by the Schoenflies symbol's stem (ITA Table 10.1.2.2).
var pointGroupOrder = map[string]int{
	"C1": 1, "Ci": 2, "C2": 2, "Cs": 2, "C2h": 4, "D2": 4, "C2v": 4, "D2h": 8,
	"C4": 4, "S4": 4, "C4h": 8, "D4": 8, "C4v": 8, "D2d": 8, "D4h": 16,
	"C3": 3, "C3i": 6, "D3": 6, "C3v": 6, "D3d": 12,
	"C6": 6, "C3h": 6, "C6h": 12, "D6": 12, "C6v": 12, "D3h": 12, "D6h": 24,
	"T": 12, "Th": 24, "O": 24, "Td": 24, "Oh": 48,
}

var latticePoints = map[byte]int{'P': 1, 'A': 2, 'B': 2, 'C': 2, 'I': 2, 'R': 3, 'F': 4}

// TestSettingsOrderAndClosure generates all 530 settings from their Hall
// symbols and checks each group's order against ITA (point-group order ×
// lattice points per cell), that it is closed under composition and
// inverses, that its point group has the order the Schoenflies symbol
// says, and that the numbering covers 1–230 in order.
func TestSettingsOrderAndClosure(t *testing.T) {
	all := Settings()
	if len(all) != 530 {
		t.Fatalf("%d settings, want 530", len(all))
	}
	prev := 0
	for _, s := range all {
		if s.Number != prev && s.Number != prev+1 {
			t.Fatalf("Hall number %d: ITA number %d after %d", s.HallNumber, s.Number, prev)
		}
		prev = s.Number
		h, err := ParseHall(s.Hall)
		if err != nil {
			t.Errorf("Hall number %d: %v", s.HallNumber, err)
			continue
		}
		stem := strings.SplitN(s.Schoenflies, "^", 2)[0]
		pg, ok := pointGroupOrder[stem]
		if !ok {
			t.Errorf("Hall number %d: unknown Schoenflies %q", s.HallNumber, s.Schoenflies)
			continue
		}
		want := pg * latticePoints[h.Lattice]
		if len(h.Ops) != want {
			t.Errorf("Hall number %d (%s, %s): %d operations, want %d", s.HallNumber, s.Hall, s.HM, len(h.Ops), want)
		}
		set := map[Op]bool{}
		rots := map[[3][3]int]bool{}
		for _, o := range h.Ops {
			set[o] = true
			rots[o.Rot] = true
			if d := o.Det(); d != 1 && d != -1 {
				t.Errorf("Hall number %d: det %d", s.HallNumber, d)
			}
		}
		if len(rots) != pg {
			t.Errorf("Hall number %d: %d rotations, want %d", s.HallNumber, len(rots), pg)
		}
		for _, a := range h.Ops {
			for _, b := range h.Ops {
				if !set[a.Mul(b)] {
					t.Fatalf("Hall number %d: %v ∘ %v = %v is not in the group", s.HallNumber, a, b, a.Mul(b))
				}
			}
		}
		if h.Ops[0] != Identity {
			t.Errorf("Hall number %d: first operation %v", s.HallNumber, h.Ops[0])
		}
	}
	if prev != 230 {
		t.Errorf("last ITA number %d", prev)
	}
}

func TestByNumberDefaults(t *testing.T) {
	for _, c := range []struct {
		n      int
		hall   string
		short  string
		choice string
	}{
		{1, "P 1", "P1", ""},
		{14, "-P 2ybc", "P2_1/c", "b1"},
		{15, "-C 2yc", "C2/c", "b1"},
		{62, "-P 2ac 2n", "Pnma", ""},
		{136, "-P 4n 2n", "P4_2/mnm", ""},
		{166, `-R 3 2"`, "R-3m", "H"},
		{227, "-F 4vw 2vw 3", "Fd-3m", "2"},
		{225, "-F 4 2 3", "Fm-3m", ""},
	} {
		s, err := ByNumber(c.n)
		if err != nil {
			t.Fatal(err)
		}
		if s.Hall != c.hall || s.Short != c.short || s.Choice != c.choice || s.Number != c.n {
			t.Errorf("ByNumber(%d) = %q %q %q", c.n, s.Hall, s.Short, s.Choice)
		}
	}
	for _, n := range []int{0, -1, 231} {
		if _, err := ByNumber(n); !errors.Is(err, ErrUnknownSymbol) {
			t.Errorf("ByNumber(%d): err %v", n, err)
		}
	}
}

func TestByHM(t *testing.T) {
	for _, c := range []struct {
		sym  string
		hall string
	}{
		{"P 1 21/c 1", "-P 2ybc"},
		{"P21/c", "-P 2ybc"},
		{"P 2_1/c", "-P 2ybc"},
		{"P 1 21/n 1", "-P 2yn"},
		{"P21/n", "-P 2yn"},
		{"P 1 1 21/b", "-P 2bc"},
		{"C 1 2/c 1", "-C 2yc"},
		{"C2/c", "-C 2yc"},
		{"I 1 2/a 1", "-I 2ya"},
		{"P 42/m n m", "-P 4n 2n"},
		{"P4_2/mnm", "-P 4n 2n"},
		{"Fm-3m", "-F 4 2 3"},
		{"F m -3 m", "-F 4 2 3"},
		{"Fd-3m", "-F 4vw 2vw 3"},
		{"F d -3 m :1", "F 4d 2 3 -1d"},
		{"Fd-3m:1", "F 4d 2 3 -1d"},
		{"F d -3 m S", "F 4d 2 3 -1d"},
		{"Fd-3m:2", "-F 4vw 2vw 3"},
		{"R -3 m", `-R 3 2"`},
		{"R -3 m :H", `-R 3 2"`},
		{"R-3m:R", "-P 3* 2"},
		{"R -3 m R", "-P 3* 2"},
		{"R 3 c", `R 3 -2"c`},
		{"Pnma", "-P 2ac 2n"},
		{"P b n m", "-P 2c 2ab"},
		{"Cmca", "-C 2ac 2"},
		{"Cmce", "-C 2ac 2"},
		{"P 63/m m c", "-P 6c 2c"},
		{"P6_3mc", "P 6c -2c"},
		{"P n -3 n", "-P 4a 2bc 3"},
		{"p 4/n m m", "-P 4a 2a"},
		{"P 4/n m m:1", "P 4ab 2ab -1ab"},
		{"F m 3 m", "-F 4 2 3"},
		{"Ia3d", "-I 4bd 2c 3"},
		{"P a 3", "-P 2ac 2ab 3"},
		{"Fd3m:1", "F 4d 2 3 -1d"},
	} {
		s, err := ByHM(c.sym)
		if err != nil {
			t.Errorf("ByHM(%q): %v", c.sym, err)
			continue
		}
		if s.Hall != c.hall {
			t.Errorf("ByHM(%q) = %q (%s), want %q", c.sym, s.Hall, s.HM, c.hall)
		}
	}
	for _, sym := range []string{"", "P 5", "Q m m m", "Fm-3m:3", "P 21/c 1 1 1"} {
		if s, err := ByHM(sym); !errors.Is(err, ErrUnknownSymbol) {
			t.Errorf("ByHM(%q) = %v, %v; want ErrUnknownSymbol", sym, s, err)
		}
	}
}

// TestNamesResolveWithinType checks that every name of every setting looks
// up a setting of the same ITA number: no symbol is claimed by two types.
func TestNamesResolveWithinType(t *testing.T) {
	for _, s := range Settings() {
		for _, name := range s.names {
			got, err := ByHM(name)
			if err != nil {
				t.Errorf("Hall number %d: ByHM(%q): %v", s.HallNumber, name, err)
				continue
			}
			if got.Number != s.Number {
				t.Errorf("Hall number %d (%d): ByHM(%q) is number %d", s.HallNumber, s.Number, name, got.Number)
			}
		}
		got, err := ByHall(s.Hall)
		if err != nil || got.Hall != s.Hall {
			t.Errorf("ByHall(%q) = %v, %v", s.Hall, got, err)
		}
	}
}

func TestParseHallErrors(t *testing.T) {
	for _, sym := range []string{"", "-", "Q 2", "P", "P 5", "P 2q", "P 2 2 2 2 2", "P 3 3", "P 2 (0 0", "P 2 (0 0 x)", "P 4'"} {
		if h, err := ParseHall(sym); !errors.Is(err, ErrBadHall) {
			t.Errorf("ParseHall(%q) = %v, %v; want ErrBadHall", sym, h, err)
		}
	}
}

func TestOpString(t *testing.T) {
	h, err := ParseHall("P 31 2c (0 0 1)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range h.Ops {
		got = append(got, o.String())
	}
	want := "x, y, z; -y, x-y, z+1/3; -x+y, -x, z+2/3; -y, -x, -z+2/3; -x+y, y, -z+1/3; x, x-y, -z"
	sort.Strings(got)
	w := strings.Split(want, "; ")
	sort.Strings(w)
	if strings.Join(got, "; ") != strings.Join(w, "; ") {
		t.Errorf("P 31 2c (0 0 1) (P 3_1 1 2): got %v, want %v", got, w)
	}
}
