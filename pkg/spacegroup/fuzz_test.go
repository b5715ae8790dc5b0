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

// FuzzDetect feeds Detect cells made from arbitrary bytes (cell
// parameters, then up to 12 atoms of up to 3 types) and perturbed copies of
// tabulated groups: it must not panic, must fail only with its documented
// errors, and a result must be a valid type whose operations map the
// crystal onto itself.
func FuzzDetect(f *testing.F) {
	f.Add([]byte{50, 50, 50, 90, 90, 90, 1, 0, 0, 0}, 0.01)
	f.Add([]byte{40, 40, 60, 90, 90, 120, 1, 85, 170, 0, 2, 170, 85, 128}, 0.1)
	f.Add([]byte{50, 60, 70, 80, 100, 110, 1, 10, 20, 30, 1, 245, 235, 225, 2, 0, 0, 0}, 0.01)
	f.Fuzz(func(t *testing.T, data []byte, symprec float64) {
		if len(data) < 6 {
			return
		}
		p := make([]float64, 6)
		for i := 0; i < 3; i++ {
			p[i] = 1 + float64(data[i])/25 // 1–11 Å
		}
		for i := 3; i < 6; i++ {
			p[i] = 30 + float64(data[i])*120/255 // 30–150°
		}
		lat := fromParams(p[0], p[1], p[2], p[3], p[4], p[5])
		var frac [][3]float64
		var types []int
		for rest := data[6:]; len(rest) >= 4 && len(frac) < 12; rest = rest[4:] {
			types = append(types, int(rest[0]%3))
			frac = append(frac, [3]float64{float64(rest[1]) / 256, float64(rest[2]) / 256, float64(rest[3]) / 256})
		}
		ds, err := Detect(lat, frac, types, Options{SymPrec: symprec})
		if err != nil {
			if !errors.Is(err, ErrBadCell) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if ds.Number < 1 || ds.Number > 230 || len(ds.Operations) == 0 {
			t.Fatalf("dataset %v with %d operations", ds, len(ds.Operations))
		}
		// Check in a reduced cell, where the nearest image is found by
		// rounding each fractional difference.
		red, r, _ := delaunay(lat)
		rf := toFloat(r)
		rinv, _ := inverse(rf)
		pos := make([]vec3, len(frac))
		for i := range frac {
			pos[i] = matVec(rinv, frac[i])
			for k := range pos[i] {
				pos[i][k] = wrap01(pos[i][k])
			}
		}
		c := newCell(red, pos, types)
		for _, op := range ds.Operations {
			w := matMul(matMul(rinv, toFloat(op.Rot)), rf)
			if _, ok := c.matchOp(w, matVec(rinv, op.Trans), 3*ds.SymPrec+1e-9); !ok {
				t.Fatalf("%v: operation %v does not map the crystal onto itself", ds, op)
			}
		}
	})
}
