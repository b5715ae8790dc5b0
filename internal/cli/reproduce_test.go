package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

// reproduceTol is how closely `crucible predict` must give back the values
// the evaluation path recorded.
const reproduceTol = 1e-9

// reproduceStructures are candidates as a campaign builds them (the
// prototype builder, substitutions in supercells; among them ordered
// mixtures and perovskites whose neighbours of different elements tie at
// CGCNN's cut, a known compound and a new polymorph) and golden CIFs.
func reproduceStructures(t *testing.T) map[string]*crystal.Structure {
	t.Helper()
	out := map[string]*crystal.Structure{}
	for _, c := range []struct{ proto, formula string }{
		{"rocksalt", "LiF"}, {"cscl", "LiF"}, {"perovskite", "RbSrBr3"}, {"perovskite", "KMgF3"},
		{"nafeo2", "NaLiF2"}, {"nafeo2", "KRbF2"}, {"spinel", "MgAl2O4"}, {"wurtzite", "ZnO"},
	} {
		out[c.proto+"-"+c.formula] = crystaltest.Build(t, c.proto, c.formula)
	}
	s := crystaltest.NaPrCl4(t)
	out["fluorite-NaPrCl4"] = s
	dir := testbed.DataPath(t, "golden", "cgcnn", "cifs")
	for _, name := range []string{"cod-1000041", "proto-SrTiO3-perovskite", "proto-Mg2AlO4-spinel-like"} {
		g, err := crystal.ReadFile(filepath.Join(dir, name+".cif"))
		if err != nil {
			t.Skipf("golden CIF %s: %v", name, err)
		}
		out["golden-"+name] = g
	}
	return out
}

// rewritten returns s turned by a random rotation, its origin moved by a
// random vector (sites wrapped back into the cell) and its sites shuffled.
func rewritten(t *testing.T, rng *rand.Rand, s *crystal.Structure, rotate, shift, shuffle bool) *crystal.Structure {
	t.Helper()
	out := s.Copy()
	if rotate {
		out = crystaltest.Rotated(t, out, crystaltest.RandomRotation(rng))
	}
	if shift {
		out = crystaltest.Translated(out, crystal.Vec3{rng.Float64(), rng.Float64(), rng.Float64()}, true)
	}
	if shuffle {
		out = crystaltest.Permuted(out, rng.Perm(s.NumSites()))
	}
	return out
}

// recordedNumbers flattens what an evaluation records into named numbers.
func recordedNumbers(ev *messages.Evaluation) map[string]float64 {
	out := map[string]float64{}
	for name, p := range ev.Properties {
		out[name] = p.Value
		out[name+" uncertainty"] = p.Uncertainty
		out[name+" tie spread"] = p.TieSpread
		out[name+" source "+p.Source] = 1
	}
	if ev.EAboveHull != nil {
		out["e_above_hull"] = *ev.EAboveHull
	}
	for f, x := range ev.Decomposition {
		out["decomposition "+f] = x
	}
	if ev.Novelty != nil {
		out["novelty "+ev.Novelty.Class] = 1
	}
	if g := ev.SpaceGroup; g != nil {
		out["space group "+g.String()] = 1
	}
	return out
}

// predictedNumbers flattens a `crucible predict --json --hull` line the
// same way.
func predictedNumbers(line map[string]json.RawMessage) (map[string]float64, error) {
	var props map[string]oracle.RecordValue
	var ehull *float64
	var dec map[string]float64
	var nov *messages.Novelty
	var sg *spacegroup.Name
	for key, dst := range map[string]any{"properties": &props, "e_above_hull": &ehull, "decomposition": &dec, "novelty": &nov} {
		if err := json.Unmarshal(line[key], dst); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if raw, ok := line["space_group"]; ok {
		if err := json.Unmarshal(raw, &sg); err != nil {
			return nil, fmt.Errorf("space_group: %w", err)
		}
	}
	out := map[string]float64{}
	for name, p := range props {
		out[name] = p.Value
		out[name+" uncertainty"] = p.Uncertainty
		out[name+" tie spread"] = p.TieSpread
		out[name+" source "+p.Source] = 1
	}
	if ehull != nil {
		out["e_above_hull"] = *ehull
	}
	for f, x := range dec {
		out["decomposition "+f] = x
	}
	if nov != nil {
		out["novelty "+nov.Class] = 1
	}
	if sg != nil {
		out["space group "+sg.String()] = 1
	}
	return out, nil
}

// TestPredictReproducesEvaluations is the property test of reproducible
// values: what the evaluation path records for a structure (the oracle as
// the evaluator runs it, scored into an evaluation and read back from its
// JSON as evaluations.jsonl holds it) equals, to reproduceTol, what
// `crucible predict --json --hull` gives for the structure exported as a
// discovery's CIF, as pymatgen JSON and as POSCAR, each as given and
// rotated, moved and reordered.
func TestPredictReproducesEvaluations(t *testing.T) {
	data := testbed.DataDir(t)
	// Own surrogates trained on first use, as predict does, so both paths
	// have the same models.
	o, err := oracle.Open(data, oracle.Options{TrainModels: true})
	if err != nil {
		t.Fatal(err)
	}
	structs := reproduceStructures(t)
	names := make([]string, 0, len(structs))
	for n := range structs {
		names = append(names, n)
	}
	slices.Sort(names)

	// The evaluation path: candidates on the wire, the evaluator's oracle,
	// its scoring, the evaluation as JSON.
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "repro", Task: tk, Budget: 10}
	spec.ApplyDefaults()
	items := make([]evaluator.Item, len(names))
	cands := make([]*messages.Candidate, len(names))
	for i, n := range names {
		ws := messages.StructureOf(structs[n])
		st, err := ws.Crystal()
		if err != nil {
			t.Fatal(err)
		}
		// predict gives every property; the evaluator those a task needs.
		items[i] = evaluator.Item{Structure: st, Properties: oracle.OwnProperties()}
		cands[i] = &messages.Candidate{ID: fmt.Sprintf("repro-g0-c%d", i), Campaign: "repro", Formula: st.Composition().ReducedFormula(), Structure: ws}
	}
	outs, err := evaluator.HierarchicalOracle{Oracle: o}.Evaluate(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]map[string]float64{}
	for i, n := range names {
		b, err := json.Marshal(evaluator.Score(spec, cands[i], &outs[i]))
		if err != nil {
			t.Fatal(err)
		}
		var ev messages.Evaluation
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		recorded[n] = recordedNumbers(&ev)
	}

	// The exports: a discovery's CIF as `crucible local` writes it, and
	// pymatgen JSON and POSCAR, of the structure and of rewritten copies.
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(23, 2))
	var files []string
	origin := map[string]string{}
	for _, n := range names {
		s := structs[n]
		for _, v := range []struct {
			name                   string
			rotate, shift, shuffle bool
		}{{"as-is", false, false, false}, {"rotated", true, false, false}, {"moved", false, true, false},
			{"shuffled", false, false, true}, {"all", true, true, true}} {
			w := rewritten(t, rng, s, v.rotate, v.shift, v.shuffle)
			base := filepath.Join(dir, n+"-"+v.name)
			if err := local.WriteCIF(base+".cif", messages.StructureOf(w)); err != nil {
				t.Fatal(err)
			}
			files = append(files, base+".cif")
			for _, f := range []crystal.Format{crystal.FormatPymatgenJSON, crystal.FormatPOSCAR} {
				var buf bytes.Buffer
				if err := crystal.WriteStructure(&buf, w, f, n); err != nil {
					t.Fatal(err)
				}
				path := base + f.Extension()
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, path)
			}
		}
	}
	for _, f := range files {
		origin[f] = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
	}
	out, _, err := runCLI(t, "", append([]string{"predict", "--data", data, "--json", "--hull"}, files...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(files) {
		t.Fatalf("%d lines for %d files", len(lines), len(files))
	}
	worst, tied := 0.0, 0
	for _, l := range lines {
		var line map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		var file string
		if err := json.Unmarshal(line["file"], &file); err != nil {
			t.Fatal(err)
		}
		got, err := predictedNumbers(line)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var n string
		for _, cand := range names {
			if strings.HasPrefix(origin[file], cand+"-") {
				n = cand
			}
		}
		want := recorded[n]
		if strings.HasSuffix(file, "-as-is.cif") && slices.ContainsFunc(slices.Collect(maps.Keys(want)), func(k string) bool {
			return strings.HasSuffix(k, " tie spread") && want[k] > 0
		}) {
			tied++
		}
		for key, w := range want {
			g, ok := got[key]
			d := math.Abs(g - w)
			if !ok || !(d <= reproduceTol*max(1, math.Abs(w))) {
				t.Errorf("%s: %s = %v (present: %v), recorded %v", filepath.Base(file), key, g, ok, w)
			}
			if ok {
				worst = max(worst, d/max(1, math.Abs(w)))
			}
		}
		for key := range got {
			if _, ok := want[key]; !ok {
				t.Errorf("%s: %s = %v, not recorded", filepath.Base(file), key, got[key])
			}
		}
	}
	classes := map[string]int{}
	for _, n := range names {
		for k := range recorded[n] {
			if c, ok := strings.CutPrefix(k, "novelty "); ok {
				classes[c]++
			}
		}
	}
	t.Logf("%d structures × %d exports: largest relative difference %.2g; %d with a tie spread; novelty %v",
		len(names), len(files)/len(names), worst, tied, classes)
	if tied < 3 {
		t.Errorf("only %d structures with a tie spread: the test no longer exercises ties", tied)
	}
	for _, c := range []string{messages.NoveltyKnownStructure, messages.NoveltyNewPolymorph, messages.NoveltyOrderedMixture, messages.NoveltyNew} {
		if classes[c] == 0 {
			t.Errorf("no structure of novelty class %s", c)
		}
	}
}
