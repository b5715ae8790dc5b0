package hull

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// subsystem returns the entries whose elements are all among els.
func subsystem(entries []Entry, els ...crystal.Element) []Entry {
	in := map[crystal.Element]bool{}
	for _, el := range els {
		in[el] = true
	}
	var out []Entry
next:
	for _, e := range entries {
		for _, el := range e.Composition.Elements() {
			if !in[el] {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

func els(symbols ...string) []crystal.Element {
	out := make([]crystal.Element, len(symbols))
	for i, s := range symbols {
		out[i] = crystal.MustElement(s)
	}
	return out
}

func TestCache(t *testing.T) {
	ref := synthetic(t, 5, 400, 3, 21) // Li, O, Fe, Mn, P
	c, err := NewCache(ref)
	if err != nil {
		t.Fatal(err)
	}
	lifeo := els("Li", "Fe", "O")
	d1, err := c.Diagram(lifeo...)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := c.Diagram(els("O", "Li", "Fe", "O")...)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Fatal("the same system built twice")
	}
	if got, want := c.Systems(), []string{"Fe-Li-O"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("systems %v, want %v", got, want)
	}

	want, err := New(subsystem(ref, lifeo...), WithElements(lifeo...))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"LiFeO2", "Li2O", "Fe3O4", "Li5FeO4"} {
		comp := crystal.MustParseFormula(f)
		got, err := c.Query(comp, -1.5)
		if err != nil {
			t.Fatal(err)
		}
		w, err := New(subsystem(ref, comp.Elements()...), WithElements(comp.Elements()...))
		if err != nil {
			t.Fatal(err)
		}
		wr, _ := w.Query(comp, -1.5)
		if math.Abs(got.EAboveHull-wr.EAboveHull) > 1e-12 {
			t.Errorf("%s: cache %v, own system %v", f, got.EAboveHull, wr.EAboveHull)
		}
		// The Li–Fe–O diagram answers for its subsystems too.
		sub, err := d1.Query(comp, -1.5)
		if err != nil {
			t.Fatal(err)
		}
		if ws, _ := want.Query(comp, -1.5); math.Abs(sub.EAboveHull-ws.EAboveHull) > 1e-12 {
			t.Errorf("%s in Li-Fe-O: %v, want %v", f, sub.EAboveHull, ws.EAboveHull)
		}
	}

	// A campaign's find: far below the hull, so stable.
	find := entry("find-1", "Li2FeO3", -4)
	if err := c.Add(find); err != nil {
		t.Fatal(err)
	}
	if ok, err := d1.IsStable("find-1"); err != nil || !ok {
		t.Errorf("the find is not stable in the cached Li-Fe-O diagram: %v, %v", ok, err)
	}
	big, err := c.Diagram(els("Li", "Fe", "O", "Mn")...)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := big.IsStable("find-1"); err != nil || !ok {
		t.Errorf("the find is not in a diagram built later: %v, %v", ok, err)
	}
	other, err := c.Diagram(els("Li", "Mn", "O")...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.IsStable("find-1"); !errors.Is(err, ErrUnknownID) {
		t.Errorf("the find is in Li-Mn-O: %v", err)
	}
	// An exact repeat is harmless; a conflicting id adds nothing at all.
	if err := c.Add(find); err != nil {
		t.Errorf("repeat: %v", err)
	}
	if err := c.Add(entry("find-2", "LiFeO2", -5), entry("find-1", "LiFeO2", -1)); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("conflicting id: %v", err)
	}
	if _, err := d1.IsStable("find-2"); !errors.Is(err, ErrUnknownID) {
		t.Errorf("a failed batch was partly added: %v", err)
	}

	if _, err := c.Query(crystal.Composition{}, 0); !errors.Is(err, ErrInvalidEntry) {
		t.Errorf("empty composition: %v", err)
	}
	if _, err := c.Diagram(); !errors.Is(err, ErrInvalidEntry) {
		t.Errorf("empty system: %v", err)
	}
	if _, err := NewCache([]Entry{entry("x", "Li", 0), entry("x", "O", 0)}); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("duplicate reference ids: %v", err)
	}
}

// TestCacheConcurrent queries and adds from several goroutines at once (run
// with -race); every diagram must end up as if built from the final pool.
func TestCacheConcurrent(t *testing.T) {
	ref := synthetic(t, 5, 300, 3, 31)
	finds := synthetic(t, 5, 60, 3, 32)
	for i := range finds {
		finds[i].ID = fmt.Sprintf("find-%d", i)
		finds[i].EnergyPerAtom -= 0.7
	}
	c, err := NewCache(ref)
	if err != nil {
		t.Fatal(err)
	}
	systems := [][]crystal.Element{
		els("Li", "O"), els("Li", "Fe", "O"), els("Li", "Fe", "Mn", "O"),
		els("Fe", "P", "O"), els("Li", "Fe", "Mn", "P", "O"), els("Mn", "O"),
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				q := finds[(g*30+i)%len(finds)]
				if _, err := c.Query(q.Composition, q.EnergyPerAtom); err != nil {
					errs <- err
					return
				}
				if _, err := c.Diagram(systems[(g+i)%len(systems)]...); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, f := range finds {
			if err := c.Add(f); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := append(append([]Entry(nil), ref...), finds...)
	for _, sys := range systems {
		d, err := c.Diagram(sys...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := New(subsystem(all, sys...), WithElements(sys...))
		if err != nil {
			t.Fatal(err)
		}
		// Entries other than references (a diagram built before an elemental
		// find below zero arrived has a reference at zero that want has not).
		count := func(entries []Entry) int {
			n := 0
			for _, e := range entries {
				if !strings.HasPrefix(e.ID, "ref-") {
					n++
				}
			}
			return n
		}
		if got, want := count(d.Entries()), count(want.Entries()); got != want {
			t.Errorf("%s: %d entries, want %d", d.System(), got, want)
		}
		wr, err := want.Results()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range wr {
			got, err := d.Result(r.ID)
			if errors.Is(err, ErrUnknownID) && strings.HasPrefix(r.ID, "ref-") {
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", d.System(), err)
			}
			if got.Stable != r.Stable || math.Abs(got.EAboveHull-r.EAboveHull) > 1e-9 {
				t.Errorf("%s: %s stable %v e_above_hull %v; want %v %v", d.System(), r.ID, got.Stable, got.EAboveHull, r.Stable, r.EAboveHull)
			}
		}
	}
}
