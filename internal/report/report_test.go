package report

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// campaign is a small campaign: four proposed candidates and a seed, two
// of them novel hits on the front, one discovery.
func campaign() ([]*messages.Evaluation, []*messages.Verdict, *messages.Summary) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ehull := 0.01
	ev := func(id, formula string, sec int, seed, feasible, stable, novel bool, gap, ef float64) *messages.Evaluation {
		return &messages.Evaluation{Schema: messages.SchemaVersion, ID: id, Campaign: "c1",
			Candidate: messages.Candidate{ID: id, Campaign: "c1", Formula: formula, Seed: seed},
			Valid:     true, Feasible: feasible, Stable: stable, Novel: novel, EvaluatedAt: t0.Add(time.Duration(sec) * time.Second),
			Properties: map[string]messages.PropertyValue{
				"band_gap":                  {Value: gap, Unit: "eV", Uncertainty: 0.39},
				"formation_energy_per_atom": {Value: ef, Unit: "eV/atom", Uncertainty: 0.04}},
			Margins:    []messages.Margin{{Property: "band_gap"}, {Property: "formation_energy_per_atom"}},
			EAboveHull: &ehull}
	}
	evs := []*messages.Evaluation{
		ev("c1-seed0", "NaCl", 0, true, true, true, false, 5, -2),
		ev("c1-g0-0", "A<b>", 1, false, true, true, true, 4, -3), // a hit, on the front
		ev("c1-g0-1", "B", 2, false, true, true, true, 3, -2),    // dominated by A
		ev("c1-g0-2", "C", 3, false, false, false, true, 1, 0),
		ev("c1-g0-3", "D", 4, false, true, false, true, 5, -1), // a hit, on the front
	}
	v := &messages.Verdict{ID: "c1-g0-0", Campaign: "c1", Formula: "A<b>", Accepted: true, Report: "accepted: stable & new",
		Checks: []messages.Check{{Name: "hull", Passed: true}}, Evaluation: *evs[1]}
	sum := &messages.Summary{Campaign: "c1", Task: "Wide gaps", State: messages.StateCompleted,
		Episodes:         []messages.EpisodeYield{{Budget: 3}, {Budget: 2}},
		ParetoObjectives: discovery.Objectives(nil)}
	sum.ParetoObjectives = []messages.ParetoObjective{{Property: "band_gap", Sense: "max"}, {Property: "formation_energy_per_atom", Sense: "min"}}
	return evs, []*messages.Verdict{v}, sum
}

func TestBuild(t *testing.T) {
	evs, found, sum := campaign()
	d := Build(Input{Campaign: "c1", Budget: 5, Objectives: sum.ParetoObjectives, Evaluations: evs, Discoveries: found})
	if d.Evaluated != 4 || d.Hits != 3 || d.StableHits != 2 {
		t.Errorf("counts: evaluated %d hits %d stable hits %d, want 4 3 2", d.Evaluated, d.Hits, d.StableHits)
	}
	if want := []int{1, 2}; !reflect.DeepEqual(d.Curve, want) || d.CurveSource != "evaluations" {
		t.Errorf("curve %v from %s, want %v from evaluations", d.Curve, d.CurveSource, want)
	}
	if want := discovery.AUDC([]int{1, 2}, 5); d.AUDC != want {
		t.Errorf("AUDC %v, want %v", d.AUDC, want)
	}
	var front []string
	for _, p := range d.Front {
		front = append(front, p.ID)
	}
	if want := []string{"c1-g0-0", "c1-g0-3"}; !reflect.DeepEqual(front, want) {
		t.Errorf("front %v, want %v", front, want)
	}
	if len(d.Discoveries) != 1 || d.Discoveries[0].EAboveHullError == nil || *d.Discoveries[0].EAboveHullError != 0.04 {
		t.Errorf("discoveries %+v: want one with E_hull error 0.04 (the formation energy's)", d.Discoveries)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, d, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if html := b.String(); !strings.Contains(html, "A&lt;b&gt;") || strings.Contains(html, "A<b>") || !strings.Contains(html, "4 ± 0.39 eV") ||
		!strings.Contains(html, "0.010 ± 0.04") || !strings.Contains(html, "accepted: stable &amp; new") {
		t.Errorf("the discoveries table lacks escaped names, uncertainties or the report:\n%s", html)
	}
	// A stored curve wins over the evaluations.
	if d := Build(Input{Evaluations: evs, Curve: []int{4}}); !reflect.DeepEqual(d.Curve, []int{4}) || d.CurveSource != "store" || d.Budget != 4 {
		t.Errorf("stored curve: %v from %s, budget %d", d.Curve, d.CurveSource, d.Budget)
	}
}

// copyRun copies testdata/run (the first 24 evaluations of a
// 120-evaluation local run, its discoveries among them and the run's
// summary) into a temporary folder.
func copyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"evaluations.jsonl", "discoveries.jsonl", "summary.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "run", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFromDirAndHTML(t *testing.T) {
	dir := copyRun(t)
	d, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The curve, counted independently from the file: the novel stable
	// candidates by evaluation time.
	if want := []int{1, 2, 6, 7, 8, 9, 10, 13, 14, 16, 18, 21, 22}; !reflect.DeepEqual(d.Curve, want) {
		t.Errorf("curve %v, want %v", d.Curve, want)
	}
	if d.Campaign != "stable-wide-bandgap-semiconductors-s1" || d.Budget != 120 || d.Evaluated != 24 || d.Discovered != 5 || len(d.Front) == 0 {
		t.Fatalf("from the folder: campaign %q budget %d evaluated %d front %d discoveries %d", d.Campaign, d.Budget, d.Evaluated, len(d.Front), d.Discovered)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, d, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`data-chart="curve"`, `data-chart="rates"`, `data-chart="pareto"`, "N_stable 13", d.Discoveries[0].ID, " eV</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", "<img"} {
		if bad == "http://" {
			// The SVG namespace is the one URL a self-contained file has.
			html = strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, "")
		}
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	files, err := WritePNG(filepath.Join(t.TempDir(), "r"), Charts(d))
	if err != nil || len(files) != 3 {
		t.Fatalf("PNG: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG (%v)", f, err)
		}
	}

	// A malformed line is an error naming the file and line.
	if err := os.WriteFile(filepath.Join(dir, "discoveries.jsonl"), []byte("{\"bogus\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FromDir(dir); err == nil || !strings.Contains(err.Error(), "discoveries.jsonl line 1") {
		t.Errorf("malformed line: err %v", err)
	}
	if _, err := FromDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a local run's folder") {
		t.Errorf("empty folder: err %v", err)
	}
}
