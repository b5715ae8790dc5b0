package spacegroup

import (
	"errors"
	"testing"
)

// FuzzParseHall checks that any text either parses into a closed group or
// is rejected with ErrBadHall, without panicking.
func FuzzParseHall(f *testing.F) {
	for _, s := range Settings() {
		f.Add(s.Hall)
	}
	for _, s := range []string{"P 31 2 (0 0 4)", "-P 4n 2 3 -1n (1 2 3)", "P 6 2 ( 0 0 -1)", "F 4d 2 3 -1d", "P 2y=", "-P 3* 2", "(", "P 2 (", "P 2 ()", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHall(s)
		if err != nil {
			if !errors.Is(err, ErrBadHall) {
				t.Fatalf("ParseHall(%q): error %v does not wrap ErrBadHall", s, err)
			}
			return
		}
		if len(h.Ops) == 0 || len(h.Ops) > maxGroupOrder || h.Ops[0] != Identity {
			t.Fatalf("ParseHall(%q): %d operations", s, len(h.Ops))
		}
	})
}

// FuzzByHM checks that any text either names a setting or is rejected with
// ErrUnknownSymbol, without panicking.
func FuzzByHM(f *testing.F) {
	for _, s := range Settings() {
		f.Add(s.HM)
		f.Add(s.Full + ":2")
	}
	for _, s := range []string{"P 1 21/c 1", "R -3 m H", "Fd-3m S", ":", " :", "  ", "P 1 ", "R-3m:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ByHM(s)
		if err != nil {
			if !errors.Is(err, ErrUnknownSymbol) {
				t.Fatalf("ByHM(%q): error %v does not wrap ErrUnknownSymbol", s, err)
			}
			return
		}
		if st.Number < 1 || st.Number > 230 {
			t.Fatalf("ByHM(%q): number %d", s, st.Number)
		}
	})
}
