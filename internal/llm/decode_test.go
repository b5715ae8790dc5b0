package llm

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// shapes is the corpus of answer shapes: each file of testdata/shapes is
// an answer written as a chat model might write it (GPT-4o following the
// schema or JSON mode; Llama with prose, Python dicts, comments and one
// fenced block per candidate; Qwen and DeepSeek with reasoning blocks,
// pymatgen dictionaries and Cartesian coordinates; Mistral with camelCase
// keys and site lists; and assorted slips). well names, in order, the
// reference structures (testdata/shapes/references.json) its candidates
// with sound chemistry stand for, however they are written; bad gives, in
// order, the reason codes of its candidates whose chemistry or geometry is
// broken, which must be rejected.
var shapes = []struct {
	file      string
	well, bad []string
}{
	{"gpt_schema.json", []string{"SrZrO3", "GaN"}, []string{}},
	{"gpt_fenced_prose.md", []string{"BaSnO3", "ZnO"}, []string{}},
	{"gpt_numbers_as_strings.json", []string{"SrZrO3", "AlN"}, []string{}},
	{"gpt_rule_number.json", []string{"SrTiO3", "MgO"}, []string{}},
	{"gpt_rule_phrase.json", []string{"BaTiO3", "LiF", "CsCl"}, []string{}},
	{"gpt_extra_keys.json", []string{"SrZrO3", "NaCl"}, []string{}},
	{"gpt_lattice_matrix.json", []string{"GaN", "TiO2"}, []string{}},
	{"gpt_unicode_formula.json", []string{"SrZrO3", "BaSnO3", "CaF2"}, []string{}},
	{"gpt_single_object.json", []string{"CsPbBr3"}, []string{}},
	{"llama_prose_array.md", []string{"SrTiO3", "ZnS"}, []string{}},
	{"llama_python_dict.txt", []string{"MgO", "LiF"}, []string{}},
	{"llama_comments_trailing.json", []string{"BaTiO3", "SiC"}, []string{}},
	{"llama_block_per_candidate.md", []string{"SrZrO3", "GaN"}, []string{}},
	{"llama_elements_positions.json", []string{"BaSnO3", "ZnO"}, []string{}},
	{"llama_sites_xyz.json", []string{"SrTiO3", "NaCl"}, []string{}},
	{"llama_units.json", []string{"SrZrO3", "AlN"}, []string{}},
	{"llama_lattice_six.json", []string{"CaF2", "GaN"}, []string{}},
	{"llama_nan_one.json", []string{"MgF2"}, []string{"bad_number"}},
	{"qwen_think.txt", []string{"SrZrO3", "GaN"}, []string{}},
	{"qwen_pymatgen.json", []string{"BaTiO3", "ZnO"}, []string{}},
	{"qwen_cartesian_flag.json", []string{"SrTiO3", "GaN"}, []string{}},
	{"qwen_coordinates_cartesian.json", []string{"NaCl", "TiO2"}, []string{}},
	{"qwen_formula_keys.json", []string{"SrZrO3", "LiF"}, []string{}},
	{"qwen_lattice_top_level.json", []string{"BaSnO3", "ZnS"}, []string{}},
	{"qwen_rule_variants.json", []string{"CsPbBr3", "MgO"}, []string{}},
	{"mistral_camel.md", []string{"SrZrO3", "SiC"}, []string{}},
	{"mistral_atoms_lists.json", []string{"BaTiO3", "AlN"}, []string{}},
	{"mistral_site_strings.json", []string{"SrTiO3", "CsCl"}, []string{}},
	{"mistral_json_lines.txt", []string{"BaSnO3", "ZnO"}, []string{}},
	{"mistral_coords_strings.json", []string{"SrZrO3", "GaN"}, []string{}},
	{"mistral_oxidation_states.json", []string{"SrTiO3", "MgO"}, []string{}},
	{"deepseek_think_draft.txt", []string{"SrTiO3", "ZnS"}, []string{}},
	{"deepseek_close_only.txt", []string{"BaTiO3", "LiF"}, []string{}},
	{"deepseek_nested.json", []string{"CaF2", "TiO2"}, []string{}},
	{"deepseek_positions_by_element.json", []string{"SrZrO3", "GaN"}, []string{}},
	{"deepseek_species_counts.json", []string{"SrZrO3", "CsPbBr3"}, []string{}},
	{"deepseek_unique_elements.json", []string{"BaSnO3", "TiO2"}, []string{}},
	{"deepseek_fractions.json", []string{"GaN", "ZnS"}, []string{}},
	{"deepseek_lattice_partial_hex.json", []string{"AlN", "ZnO"}, []string{}},
	{"deepseek_lattice_cubic_short.json", []string{"SrZrO3", "NaCl"}, []string{}},
	{"deepseek_lengths_angles.json", []string{"TiO2", "MgF2"}, []string{}},
	{"deepseek_cif.json", []string{"SrTiO3", "ZnO"}, []string{}},
	{"deepseek_double_encoded.json", []string{"BaTiO3", "LiF"}, []string{}},
	{"deepseek_truncated.txt", []string{"SrZrO3", "GaN"}, []string{}},
	{"misc_formula_markup.json", []string{"SrZrO3", "CaF2", "Li2O"}, []string{}},
	{"misc_species_names.json", []string{"SrTiO3", "MgO"}, []string{}},
	{"misc_flat_coords.json", []string{"BaSnO3", "ZnO"}, []string{}},
	{"misc_decimal_comma.json", []string{"SrZrO3"}, []string{}},
	{"misc_rule_shapes.json", []string{"BaTiO3", "NaCl", "CsCl", "SiC"}, []string{}},
	{"misc_lattice_nm.json", []string{"SrZrO3"}, []string{}},
	{"misc_no_formula.json", []string{"GaN", "CsPbBr3"}, []string{}},
	{"misc_numbered_keys.json", []string{"TiO2", "MgO"}, []string{}},
	{"misc_ase.json", []string{"SrTiO3", "AlN"}, []string{}},
	{"misc_keys_with_units.json", []string{"ZnS"}, []string{}},
	{"misc_rationale_list.json", []string{"BaSnO3"}, []string{}},
	{"misc_lattice_text.json", []string{"SrZrO3", "GaN"}, []string{}},
	{"misc_coords_objects.json", []string{"SrTiO3"}, []string{}},
	{"misc_missing_commas.txt", []string{"MgO", "ZnO"}, []string{}},
	{"misc_site_labels.json", []string{"SrZrO3"}, []string{}},
	{"misc_species_text.json", []string{"CaF2", "SrTiO3"}, []string{}},
	{"misc_species_counts_map.json", []string{"NaCl"}, []string{}},
	{"misc_lattice_matrix_object.json", []string{"GaN", "LiF"}, []string{}},
	{"misc_cartesian_key.json", []string{"CsCl", "AlN"}, []string{}},
	{"misc_tilde_minus.json", []string{"SrTiO3"}, []string{}},
	{"bad_chemistry.json", []string{"ZnS"}, []string{"unknown_element", "formula_mismatch", "length_mismatch"}},
	{"bad_structures.json", []string{"GaN"}, []string{"partial_occupancy", "not_fractional", "bad_lattice", "missing_field"}},
	{"more_coords_by_label.json", []string{"SrZrO3"}, []string{}},
	{"more_structure_cif.json", []string{"BaTiO3"}, []string{}},
	{"more_sites_grouped.json", []string{"SrTiO3", "CaF2"}, []string{}},
	{"more_sites_map.json", []string{"NaCl"}, []string{}},
	{"more_atoms_nested.json", []string{"ZnO"}, []string{}},
	{"more_coordinates_object.json", []string{"GaN", "CsCl"}, []string{}},
	{"more_unescaped_quotes.txt", []string{"BaSnO3", "MgO"}, []string{}},
	{"more_candidates_as_strings.json", []string{"SrZrO3", "AlN"}, []string{}},
	{"more_template_echo.md", []string{"TiO2"}, []string{}},
	{"more_space_group_symbols.json", []string{"SrZrO3", "GaN", "TiO2"}, []string{}},
	{"more_lattice_system_inside.json", []string{"SrTiO3", "AlN"}, []string{}},
	{"more_angles_radians.json", []string{"MgO"}, []string{}},
	{"more_uncertainty.json", []string{"NaCl"}, []string{}},
	{"more_capitalised_keys.json", []string{"BaTiO3", "ZnS"}, []string{}},
	{"more_lattice_vectors.json", []string{"CsPbBr3", "ZnO"}, []string{}},
	{"more_pymatgen_top.json", []string{"SrTiO3", "GaN"}, []string{}},
	{"more_unclosed_fence.md", []string{"SiC", "BaSnO3"}, []string{}},
	{"more_reasoning_field.json", []string{"SrZrO3", "LiF"}, []string{}},
	{"bad_more.json", []string{"MgO"}, []string{"formula_mismatch", "not_fractional"}},
	{"more_single_numbers.json", []string{"MgO", "SrTiO3"}, []string{}},
	{"more_coords_values.json", []string{"CsCl", "BaSnO3"}, []string{}},
	{"bad_wyckoff.json", []string{"ZnS"}, []string{"formula_mismatch"}},
	{"more_markdown_escapes.md", []string{"SrZrO3", "GaN"}, []string{}},
	{"more_lattice_chained.json", []string{"SrTiO3", "ZnO"}, []string{}},
	{"more_wrapped_items.txt", []string{"BaTiO3", "LiF"}, []string{}},
}

// minShapesRead is the share of well-formed candidates the decoder must
// read.
const minShapesRead = 0.98

// TestAnswerShapes reads every answer of the corpus and measures the share
// of its well-formed candidates read as the structure they stand for
// (same reduced formula, same fingerprint, volume per atom within 1 %).
// A candidate read as another structure, or a broken one accepted, fails
// the test whatever the share.
func TestAnswerShapes(t *testing.T) {
	refs := shapeReferences(t)
	total, read := 0, 0
	for _, c := range shapes {
		t.Run(c.file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "shapes", c.file))
			if err != nil {
				t.Fatal(err)
			}
			total += len(c.well)
			ex, err := extractCandidates(string(text))
			if err != nil {
				t.Errorf("%v: %d well-formed candidates not read", err, len(c.well))
				return
			}
			var structures []*crystal.Structure
			var codes []string
			for _, raw := range ex.Candidates {
				_, s, _, err := decodeCandidate(raw)
				if err != nil {
					codes = append(codes, parseCode(err))
					t.Logf("rejected: %s: %v", parseCode(err), err)
					continue
				}
				structures = append(structures, s)
			}
			for i, want := range c.well {
				if i >= len(structures) {
					t.Logf("candidate %s not read", want)
					continue
				}
				if why := differs(structures[i], refs[want]); why != "" {
					t.Errorf("candidate %d read as another structure than %s: %s", i, want, why)
					continue
				}
				read++
			}
			if len(structures) > len(c.well) {
				t.Errorf("%d candidates read, want %d", len(structures), len(c.well))
			}
			for _, code := range c.bad {
				if !slices.Contains(codes, code) {
					t.Errorf("no candidate rejected as %s: rejections %v", code, codes)
				}
			}
			if wantRejected := len(c.bad) + len(c.well) - min(len(c.well), len(structures)); len(codes) > wantRejected {
				t.Errorf("%d rejections %v, want %d", len(codes), codes, wantRejected)
			}
		})
	}
	rate := float64(read) / float64(total)
	t.Logf("%d of %d well-formed candidates read (%.1f %%) in %d answers", read, total, 100*rate, len(shapes))
	if rate < minShapesRead {
		t.Errorf("read %.1f %% of the well-formed candidates, want at least %.0f %%", 100*rate, 100*minShapesRead)
	}
}

// shapeReferences loads the corpus's reference structures.
func shapeReferences(t *testing.T) map[string]*crystal.Structure {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "shapes", "references.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	refs := map[string]*crystal.Structure{}
	for name, r := range raw {
		_, s, err := crystal.ParseCandidateJSON(r)
		if err != nil {
			t.Fatalf("reference %s: %v", name, err)
		}
		refs[name] = s
	}
	for _, c := range shapes {
		for _, w := range c.well {
			if refs[w] == nil {
				t.Fatalf("%s: no reference %s", c.file, w)
			}
		}
	}
	return refs
}

// differs says how s differs from the reference structure ref ("" when
// it is the same structure).
func differs(s, ref *crystal.Structure) string {
	if f, g := s.Composition().ReducedFormula(), ref.Composition().ReducedFormula(); f != g {
		return "formula " + f + ", want " + g
	}
	if v, w := s.VolumePerAtom(), ref.VolumePerAtom(); math.Abs(v-w) > 0.01*w {
		return "volume per atom differs"
	}
	fs, err := crystal.Fingerprint(s)
	if err != nil {
		return err.Error()
	}
	fr, _ := crystal.Fingerprint(ref)
	if fs != fr {
		return "fingerprint " + fs + ", want " + fr
	}
	return ""
}

func TestResolveRule(t *testing.T) {
	cases := []struct{ in, want, how string }{
		{`"5. Crystal prototype substitution"`, "5. Crystal prototype substitution", ""},
		{`5`, "5. Crystal prototype substitution", "rule_as_number"},
		{`5.0`, "5. Crystal prototype substitution", "rule_as_number"},
		{`"5"`, "5. Crystal prototype substitution", "rule_phrase"},
		{`"Rule 13"`, "13. Tolerance-factor guided substitution", "rule_phrase"},
		{`"rule #2: similar elements"`, "2. Stoichiometry-preserving substitution", "rule_phrase"},
		{`"crystal prototype substitution"`, "5. Crystal prototype substitution", "rule_phrase"},
		{`"same group substitution"`, "1. Same-group elemental substitution", "rule_phrase"},
		{`"Retrosynthesis"`, "11. Retrosynthesis-based forward design", "rule_phrase"},
		{`"none"`, "none", ""},
		{`"N/A"`, "none", "rule_phrase"},
		{`null`, "", ""},
		{`[9, 5]`, "9. Template-guided combinatorics", "rule_list"},
		{`{"number": 7, "name": "redox"}`, "7. Oxidation/reduction variant", "rule_object"},
		{`"my own idea"`, "unknown: my own idea", "rule_unknown"},
		{`42`, "unknown: 42", "rule_unknown"},
		{`"substitution"`, "unknown: substitution", "rule_unknown"}, // matches six rules alike
	}
	for _, c := range cases {
		got, how := resolveRule(json.RawMessage(c.in))
		if got != c.want || how != c.how {
			t.Errorf("resolveRule(%s) = %q, %q; want %q, %q", c.in, got, how, c.want, c.how)
		}
	}
}

func TestNumberString(t *testing.T) {
	cases := []struct {
		in   string
		q    quantity
		want float64
		err  bool
	}{
		{"4.135", length, 4.135, false},
		{"4,135", length, 4.135, false},
		{"4.1 Å", length, 4.1, false},
		{"4.1Å", length, 4.1, false},
		{"4.1 angstrom", length, 4.1, false},
		{"0.41 nm", length, 4.1, false},
		{"410 pm", length, 4.1, false},
		{"90°", angle, 90, false},
		{"120 degrees", angle, 120, false},
		{"1.5707963 rad", angle, 89.9999985, false},
		{"−0.25", plain, -0.25, false},
		{"~4.1", length, 4.1, false},
		{"1/3", plain, 1.0 / 3, false},
		{"5.64 (conventional)", length, 5.64, false},
		{"5.64 ± 0.02", length, 5.64, false},
		{"NaN", plain, 0, true},
		{"Infinity", plain, 0, true},
		{"four", length, 0, true},
		{"90°", length, 0, true},
		{"4.1 Å", angle, 0, true},
		{"1/0", plain, 0, true},
		{"4.1 furlongs", length, 0, true},
	}
	for _, c := range cases {
		got, err := numberString(c.in, c.q)
		if (err != nil) != c.err || (!c.err && math.Abs(got-c.want) > 1e-6) {
			t.Errorf("numberString(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

func TestNormalFormula(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SrZrO3", "SrZrO3"},
		{"SrZrO₃", "SrZrO3"},
		{"Sr Zr O3", "SrZrO3"},
		{"SrZrO$_3$", "SrZrO3"},
		{"SrZrO<sub>3</sub>", "SrZrO3"},
		{"Li₂O (antifluorite)", "Li2O"},
		{"SrZrO3 - cubic perovskite", "SrZrO3"},
		{"ZnS zinc blende", "ZnS"},
		{"Ca3(PO4)2", "Ca3(PO4)2"},
		{"Fe³⁺2O3", ""}, // a charge inside the formula is not read
		{"SrXxO3", ""},
	}
	for _, c := range cases {
		got, err := normalFormula(c.in)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("normalFormula(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestElementSymbol(t *testing.T) {
	cases := []struct {
		in    string
		want  string
		count int
	}{
		{"Sr", "Sr", 0}, {"sr", "Sr", 0}, {"SR", "Sr", 0}, {"Sr2+", "Sr", 0}, {"Sr+2", "Sr", 0},
		{"Sr^{2+}", "Sr", 0}, {"Sr(II)", "Sr", 0}, {"Sr²⁺", "Sr", 0}, {"O2-", "O", 0}, {"O1", "O", 1},
		{"O3", "O", 3}, {"Strontium", "Sr", 0}, {"oxygen", "O", 0}, {"Aluminium", "Al", 0},
		{"Xx", "", 0}, {"Sr-O", "", 0}, {"", "", 0}, {"12", "", 0},
	}
	for _, c := range cases {
		got, n, ok := elementSymbol(c.in)
		if got != c.want || ok != (c.want != "") || n != c.count {
			t.Errorf("elementSymbol(%q) = %q, %d, %v; want %q, %d", c.in, got, n, ok, c.want, c.count)
		}
	}
}

func TestCrystalSystemOf(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"cubic"`, "cubic"}, {`"Cubic perovskite"`, "cubic"}, {`221`, "cubic"}, {`"Pm-3m (221)"`, "cubic"},
		{`"Pm-3m"`, "cubic"}, {`"F d -3 m"`, "cubic"}, {`"F-43m"`, "cubic"}, {`"Ia-3d"`, "cubic"}, {`"P4_332"`, "cubic"},
		{`"P6_3mc"`, "hexagonal"}, {`"P 6_3/m m c"`, "hexagonal"}, {`"R-3m"`, "trigonal"}, {`"P3m1"`, "trigonal"},
		{`"I4/mmm"`, "tetragonal"}, {`"P4_2/mnm"`, "tetragonal"}, {`"I-42d"`, "tetragonal"}, {`"Pnma"`, ""},
		{`{"symbol": "Fm-3m", "number": 225}`, "cubic"}, {`"perovskite"`, ""},
	}
	for _, c := range cases {
		if got := systemOf(json.RawMessage(c.in)); got != c.want {
			t.Errorf("systemOf(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDecodeAudit: how a candidate was read is reported: the departures
// from the asked-for format, and the keys left unread.
func TestDecodeAudit(t *testing.T) {
	raw := `{"formula": "SrZrO₃", "lattice": {"a": "4.15 Å", "b": 4.15, "c": 4.15, "alpha": 90, "beta": 90, "gamma": 90, "volume": 71.5},
		"elements": ["Sr", "Zr", "O", "O", "O"], "positions": [[0,0,0],[0.5,0.5,0.5],[0.5,0.5,0],[0.5,0,0.5],[0,0.5,0.5]],
		"rule": 5, "space_group": "Pm-3m", "confidence": 0.9}`
	c, s, rd, err := decodeCandidate(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	if c.Formula != "SrZrO3" || c.Rule != "5. Crystal prototype substitution" || s.NumSites() != 5 {
		t.Fatalf("read %q, rule %q, %d sites", c.Formula, c.Rule, s.NumSites())
	}
	for _, want := range []string{"formula_notation", "number_as_string", "species_key", "coords_key", "rule_as_number"} {
		if !slices.Contains(rd.Adapted, want) {
			t.Errorf("adapted %v lacks %s", rd.Adapted, want)
		}
	}
	slices.Sort(rd.Ignored)
	if want := []string{"confidence", "lattice.volume", "space_group"}; !slices.Equal(rd.Ignored, want) {
		t.Errorf("ignored %v, want %v", rd.Ignored, want)
	}
}
