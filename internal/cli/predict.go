package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/task"
)

func init() { register(newPredictCmd) }

func newPredictCmd() *cobra.Command {
	var (
		asJSON, withHull bool
		dir              string
		workers          int
	)
	cmd := &cobra.Command{
		Use:   "predict [--json] [--hull] FILE...",
		Short: "Properties of crystal structures from the oracle: reference lookup, CGCNN, exact hull",
		Long: `Evaluate each FILE (CIF, pymatgen Structure JSON or a candidate answer
{formula, lattice, species, coords}) with Crucible's oracle, as the evaluator
does: validity checks; CGCNN predictions of formation energy, band gap, bulk
and shear modulus, Poisson ratio, Fermi energy and metal probability, each
with the model's published test MAE as its uncertainty (moduli: propagated
from log10 GPa) and, where neighbours of different elements tie at CGCNN's
twelfth-neighbour cut, the tie spread: how far the prediction moves with
the choice among them (added uncertainty; the value is the average over
the choices, the same however the structure is written down); the
reference value instead when the reduced formula is in the Materials
Project tables and the structure is not a new polymorph (the CGCNN value is
shown beside it); the dielectric constant for known compounds only; density
and volume per atom exactly from the structure.

Novelty: the structure is compared with the known structures of its
formula (the Materials Project CIF sets of the data directory, the golden
CIFs, the prototype library's archetypes; pymatgen's StructureMatcher
defaults, volumes scaled): known_structure (with the match), new_polymorph
(known formula, no structure matches: its own CGCNN values, its energy
placed against the known polymorph's), known_formula (in the tables, no
structure held), new, or with --hull ordered_mixture (a new formula above
the hull whose facet is its isovalent end members, named).

With --hull, the energy above the convex hull of the reference phases
(eV/atom, negative below it) and the decomposition into stable phases.

Validity is a flag, not a gate: every structure that can be featurised is
predicted, and an invalid one gets its reasons beside its properties (a
composition no chemistry allows, a stated formula that disagrees). Only an
unreadable structure, a physically impossible one (overlapping atoms, a
cell too dense, exploded or too thin), one of more atoms than the validity
limit or one with an element the surrogates do not know gets nothing but its
structure properties. The bonding class of the composition (ionic,
polyanionic, metal_rich, intermetallic, covalent, element; see "crucible
validate --help") is reported with it.

One line per structure: file, reduced formula, novelty, class,
validity (with the reasons when invalid), then every property as
name=value±uncertainty unit (source; tie spread).

With --json, one object per line with the keys file (as given), formula,
class (null for an unreadable file), valid, predicted (false when only
structure properties were computed), known (the formula is in the
reference tables), novelty ({class[, match, rms, polymorphs, end_members]};
null when not predicted), oxidation_states (when an assignment was found),
reasons ([{code, detail}]), warnings, properties ({name: {value, unit,
source, uncertainty, tie_spread[, surrogate]}}), and with --hull
e_above_hull, hull_energy_per_atom and decomposition ({formula: fraction};
null when it cannot be computed, with a warning saying why).

Data comes from --data, else $CRUCIBLE_DATA, else ~/.cache/crucible ("crucible
data pull" fetches it). An unreadable file is reported (with --json as a line
with valid false and the reason) and the others are processed; the exit
status is then 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dataDir(dir)
			if err != nil {
				return err
			}
			o, err := oracle.Open(d, oracle.Options{Workers: workers})
			if err != nil {
				return err
			}
			lines, unreadable, err := predictFiles(cmd, o, args, withHull)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, l := range lines {
				if asJSON {
					err = writePredictionJSON(out, l, withHull)
				} else {
					err = writePredictionText(out, cmd.ErrOrStderr(), l, withHull)
				}
				if err != nil {
					return err
				}
			}
			if unreadable > 0 {
				return &exitError{code: 1, err: fmt.Errorf("predict: %d of %d files unreadable", unreadable, len(args))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().BoolVar(&withHull, "hull", false, "also the energy above the convex hull and the decomposition")
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default $CRUCIBLE_DATA, else ~/.cache/crucible)")
	cmd.Flags().IntVar(&workers, "workers", 0, "structures evaluated in parallel (default: one per CPU)")
	return cmd
}

// prediction is one file's outcome: a result, or why the file could not be
// read.
type prediction struct {
	file   string
	result oracle.Result
	// readErr is set for a file without a structure; result then holds
	// only the reason.
	readErr error
}

// predictFiles reads every file and evaluates the structures in one batch.
func predictFiles(cmd *cobra.Command, o *oracle.Oracle, files []string, withHull bool) ([]prediction, int, error) {
	out := make([]prediction, len(files))
	var reqs []oracle.Request
	var which []int
	unreadable := 0
	for i, path := range files {
		out[i].file = path
		s, err := crystal.ReadFile(path)
		if err != nil {
			code := crystal.ReasonUnreadable
			if errors.Is(err, crystal.ErrFormulaMismatch) {
				code = crystal.ReasonFormulaMismatch
			}
			out[i].readErr = err
			out[i].result.Reasons = []oracle.Reason{{Code: code, Detail: err.Error()}}
			unreadable++
			continue
		}
		reqs = append(reqs, oracle.Request{Structure: s, Hull: withHull})
		which = append(which, i)
	}
	results, err := o.Evaluate(cmd.Context(), reqs)
	if err != nil {
		return nil, 0, err
	}
	for k, i := range which {
		out[i].result = results[k]
	}
	return out, unreadable, nil
}

// predictionValue is a property on a line of --json output: uncertainty is
// always present (0 for exact sources).
type predictionValue struct {
	Value       float64  `json:"value"`
	Unit        string   `json:"unit"`
	Source      string   `json:"source"`
	Uncertainty float64  `json:"uncertainty"`
	TieSpread   float64  `json:"tie_spread"`
	Surrogate   *float64 `json:"surrogate,omitempty"`
}

type predictionLine struct {
	File            string                     `json:"file"`
	Formula         string                     `json:"formula"`
	Class           *string                    `json:"class"`
	Valid           bool                       `json:"valid"`
	Predicted       bool                       `json:"predicted"`
	Known           bool                       `json:"known"`
	Novelty         *messages.Novelty          `json:"novelty"`
	OxidationStates map[string]float64         `json:"oxidation_states,omitempty"`
	Reasons         []oracle.Reason            `json:"reasons"`
	Warnings        []oracle.Reason            `json:"warnings,omitempty"`
	Properties      map[string]predictionValue `json:"properties"`
}

type predictionHullLine struct {
	predictionLine
	EAboveHull    *float64           `json:"e_above_hull"`
	HullEnergy    *float64           `json:"hull_energy_per_atom"`
	Decomposition map[string]float64 `json:"decomposition"`
}

func writePredictionJSON(w io.Writer, p prediction, withHull bool) error {
	r := p.result
	line := predictionLine{
		File: p.file, Formula: r.Formula, Valid: r.Valid, Predicted: r.Predicted, Known: r.Known, Novelty: r.Novelty,
		OxidationStates: r.OxidationStates, Reasons: r.Reasons, Warnings: r.Warnings, Properties: map[string]predictionValue{},
	}
	if r.Class != "" {
		class := string(r.Class)
		line.Class = &class
	}
	if line.Reasons == nil {
		line.Reasons = []oracle.Reason{}
	}
	for name, v := range r.Properties {
		line.Properties[name] = predictionValue{Value: v.Value, Unit: v.Unit, Source: string(v.Source), Uncertainty: v.Uncertainty, TieSpread: v.TieSpread, Surrogate: v.Surrogate}
	}
	var v any = line
	if withHull {
		hl := predictionHullLine{predictionLine: line}
		if st := r.Stability; st != nil {
			hl.EAboveHull, hl.HullEnergy, hl.Decomposition = &st.EAboveHull, &st.HullEnergy, st.Decomposition
		}
		v = hl
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write %s: %w", p.file, err)
	}
	return nil
}

// writePredictionText writes one line per structure; an unreadable file
// goes to errw.
func writePredictionText(w, errw io.Writer, p prediction, withHull bool) error {
	r := p.result
	if p.readErr != nil {
		_, err := fmt.Fprintf(errw, "%s: %s: %v\n", p.file, r.Reasons[0].Code, p.readErr)
		return err
	}
	parts := []string{p.file, r.Formula}
	switch {
	case r.Novelty != nil:
		parts = append(parts, noveltyText(r.Novelty))
	case r.Known:
		parts = append(parts, "known")
	default:
		parts = append(parts, "novel")
	}
	if r.Class != "" {
		parts = append(parts, string(r.Class))
	}
	if r.Valid {
		parts = append(parts, "valid")
	} else {
		parts = append(parts, "invalid: "+reasonsText(r.Reasons))
	}
	for _, name := range propertyOrder(r.Properties) {
		parts = append(parts, valueText(name, r.Properties[name]))
	}
	if withHull && r.Stability != nil {
		st := r.Stability
		parts = append(parts, fmt.Sprintf("e_above_hull=%.4g eV/atom (%s energy)", st.EAboveHull, st.FormationEnergySource),
			"decomposition="+decompositionText(st.Decomposition))
	}
	if len(r.Warnings) > 0 {
		parts = append(parts, "warning: "+reasonsText(r.Warnings))
	}
	_, err := fmt.Fprintln(w, strings.Join(parts, "  "))
	return err
}

// propertyOrder lists the properties present in registry order.
func propertyOrder(props map[string]oracle.Value) []string {
	var out []string
	for _, name := range task.PropertyNames() {
		if _, ok := props[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// valueText writes "band_gap=4.694 eV (reference; cgcnn 4.786)",
// "efermi=-0.669±0.363 eV (cgcnn)" or, where neighbours tie at CGCNN's
// cut, "band_gap=4.09±0.388 eV (cgcnn; tie spread 1.3)".
func valueText(name string, v oracle.Value) string {
	s := fmt.Sprintf("%s=%.4g", name, v.Value)
	if v.Uncertainty > 0 {
		s += fmt.Sprintf("±%.4g", v.Uncertainty)
	}
	if v.Unit != "" {
		s += " " + v.Unit
	}
	s += " (" + string(v.Source)
	if v.TieSpread > 0 {
		s += fmt.Sprintf("; tie spread %.4g", v.TieSpread)
	}
	if v.Surrogate != nil {
		s += fmt.Sprintf("; cgcnn %.4g", *v.Surrogate)
	}
	return s + ")"
}

func decompositionText(d map[string]float64) string {
	names := make([]string, 0, len(d))
	for f := range d {
		names = append(names, f)
	}
	sort.Slice(names, func(i, j int) bool {
		if d[names[i]] != d[names[j]] {
			return d[names[i]] > d[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, f := range names {
		parts[i] = fmt.Sprintf("%s:%.4g", f, d[f])
	}
	return strings.Join(parts, "+")
}

func reasonsText(rs []oracle.Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r.Code) + ": " + r.Detail
	}
	return strings.Join(parts, "; ")
}

// noveltyText writes the novelty class: "new", "new_polymorph of
// prototype:rocksalt/LiF", "known_structure prototype:rocksalt/LiF",
// "ordered_mixture of LiF+NaF".
func noveltyText(n *messages.Novelty) string {
	switch n.Class {
	case messages.NoveltyKnownStructure:
		return n.Class + " " + n.Match
	case messages.NoveltyNewPolymorph:
		return n.Class + " of " + strings.Join(n.Polymorphs, ",")
	case messages.NoveltyOrderedMixture:
		return n.Class + " of " + decompositionText(n.EndMembers)
	}
	return n.Class
}
