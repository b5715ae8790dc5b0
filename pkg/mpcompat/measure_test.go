package mpcompat_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
	"github.com/crucible-sci/crucible/pkg/mpcompat"
	"github.com/crucible-sci/crucible/pkg/relax"
)

// TestMeasureFormationEnergy relaxes MP structures shipped with CIFs
// (mp_dielectric_petousis2017.csv, mp_piezo_dejong2015.csv) with M3GNet
// (fmax 0.05 eV/Å, 500 steps), computes their formation energies with both
// correction schemes, and compares them with mp_e_form.csv (per
// composition, its lowest entry): MAE and bias overall and per chemistry
// class. It is a measurement, not a unit test: it runs only when
// CRUCIBLE_EFORM_SAMPLE is set to the number of structures to relax (a
// fixed, evenly spaced subset of those with CRUCIBLE_EFORM_MINSITES to
// CRUCIBLE_EFORM_MAXSITES sites, default 1 to 8; "all" for every one).
func TestMeasureFormationEnergy(t *testing.T) {
	sample := os.Getenv("CRUCIBLE_EFORM_SAMPLE")
	dir := os.Getenv("CRUCIBLE_DATA")
	if sample == "" || dir == "" {
		t.Skip("set CRUCIBLE_DATA and CRUCIBLE_EFORM_SAMPLE to measure")
	}
	minSites, maxSites := 1, 8
	if v := os.Getenv("CRUCIBLE_EFORM_MINSITES"); v != "" {
		minSites, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("CRUCIBLE_EFORM_MAXSITES"); v != "" {
		maxSites, _ = strconv.Atoi(v)
	}
	model, err := m3gnet.LoadData(dir)
	if err != nil {
		t.Fatal(err)
	}
	compat, err := mpcompat.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := lowestFormationEnergies(t, filepath.Join(dir, "data", "mp_e_form.csv"))

	type item struct {
		id   string
		st   *crystal.Structure
		want float64
	}
	var items []item
	seen := map[string]bool{}
	for _, name := range []string{"mp_dielectric_petousis2017.csv", "mp_piezo_dejong2015.csv"} {
		for _, row := range readCSV(t, filepath.Join(dir, "data", name)) {
			id, cif := row["material_id"], row["cif"]
			if seen[id] {
				continue
			}
			seen[id] = true
			st, err := crystal.ParseCIF([]byte(cif))
			if err != nil || st.NumSites() < minSites || st.NumSites() > maxSites {
				continue
			}
			ok := true
			for _, e := range st.Species {
				ok = ok && model.Supports(e)
			}
			want, found := ref[st.Composition().ReducedFormula()]
			if ok && found {
				items = append(items, item{id, st, want})
			}
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].id < items[j].id })
	n := len(items)
	if sample != "all" {
		k, err := strconv.Atoi(sample)
		if err != nil || k <= 0 {
			t.Fatalf("CRUCIBLE_EFORM_SAMPLE=%q: want a count or all", sample)
		}
		n = min(k, len(items))
	}
	picked := make([]item, n)
	for i := range picked {
		picked[i] = items[i*len(items)/n]
	}
	t.Logf("%d structures of %d to %d sites with a reference; relaxing %d", len(items), minSites, maxSites, n)

	type outcome struct {
		item
		ef        [2]float64
		converged bool
		steps     int
		err       error
	}
	out := make([]outcome, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calc := m3gnet.NewCalculator(model)
			for i := range next {
				o := outcome{item: picked[i]}
				r, err := relax.Relax(context.Background(), calc, m3gnet.FromStructure(o.st), relax.Options{})
				if err == nil {
					var st *crystal.Structure
					if st, err = r.System.Structure(); err == nil {
						for k, s := range []mpcompat.Scheme{mpcompat.MP2020, mpcompat.Legacy} {
							if o.ef[k], _, err = compat.FormationEnergyPerAtom(s, st, r.Energy); err != nil {
								break
							}
						}
					}
					o.converged, o.steps = r.Converged, r.Steps
				}
				o.err = err
				out[i] = o
			}
		}()
	}
	for i := range picked {
		next <- i
	}
	close(next)
	wg.Wait()

	type acc struct {
		n, conv   int
		abs, bias [2]float64
	}
	classes := map[string]*acc{}
	add := func(c string, o outcome) {
		a := classes[c]
		if a == nil {
			a = &acc{}
			classes[c] = a
		}
		a.n++
		if o.converged {
			a.conv++
		}
		for k := range o.ef {
			d := o.ef[k] - o.want
			a.abs[k] += math.Abs(d)
			a.bias[k] += d
		}
	}
	for _, o := range out {
		if o.err != nil {
			t.Logf("%s: %v", o.id, o.err)
			continue
		}
		t.Logf("%-11s %-12s ref %+.3f  MP2020 %+.3f  legacy %+.3f  steps %3d converged %v", o.id, o.st.Composition().ReducedFormula(), o.want, o.ef[0], o.ef[1], o.steps, o.converged)
		add("all", o)
		add(class(o.st.Composition()), o)
	}
	var names []string
	for c := range classes {
		names = append(names, c)
	}
	sort.Strings(names)
	t.Logf("%-16s %5s %9s %14s %14s %14s %14s", "class", "n", "converged", "MAE MP2020", "bias MP2020", "MAE legacy", "bias legacy")
	for _, c := range names {
		a := classes[c]
		f := float64(a.n)
		t.Logf("%-16s %5d %9d %14.4f %14.4f %14.4f %14.4f", c, a.n, a.conv, a.abs[0]/f, a.bias[0]/f, a.abs[1]/f, a.bias[1]/f)
	}
}

// class names a composition's chemistry by its most electronegative
// element: GGA+U oxides and fluorides, oxides, halides, chalcogenides,
// pnictides, or intermetallics (all metals) and others.
func class(c crystal.Composition) string {
	if mpcompat.IsGGAU(c) {
		return "GGA+U O/F"
	}
	var most crystal.Element
	allMetal := true
	for _, e := range c.Elements() {
		if e.X() >= most.X() {
			most = e
		}
		allMetal = allMetal && e.IsMetal()
	}
	switch most.Symbol() {
	case "O":
		return "oxide"
	case "F", "Cl", "Br", "I":
		return "halide"
	case "S", "Se", "Te":
		return "chalcogenide"
	case "N", "P", "As", "Sb":
		return "pnictide"
	}
	if allMetal {
		return "intermetallic"
	}
	return "other"
}

func readCSV(t *testing.T, path string) []map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m := make(map[string]string, len(head))
		for i, h := range head {
			m[h] = rec[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// lowestFormationEnergies reads mp_e_form.csv (formula, target) and keeps
// each reduced formula's lowest formation energy.
func lowestFormationEnergies(t *testing.T, path string) map[string]float64 {
	out := map[string]float64{}
	for _, row := range readCSV(t, path) {
		c, err := crystal.ParseFormula(row["formula"])
		if err != nil {
			continue
		}
		v, err := strconv.ParseFloat(row["target"], 64)
		if err != nil {
			t.Fatal(fmt.Errorf("mp_e_form %s: %w", row["formula"], err))
		}
		k := c.ReducedFormula()
		if old, ok := out[k]; !ok || v < old {
			out[k] = v
		}
	}
	return out
}
