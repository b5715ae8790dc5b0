package crystal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// FileValidation is the validation of one structure file, as "crucible
// validate" reports it. Pointers are null for an unreadable file (and
// MinDistance when it cannot be measured).
type FileValidation struct {
	File            string             `json:"file"`
	Formula         *string            `json:"formula"`
	ReducedFormula  *string            `json:"reduced_formula"`
	NumAtoms        *int               `json:"natoms"`
	Density         *float64           `json:"density"`
	Volume          *float64           `json:"volume"`
	MinDistance     *float64           `json:"min_distance"`
	ChemicalSystem  *string            `json:"chemsys"`
	Class           *string            `json:"class"`
	ChargeNeutral   *bool              `json:"charge_neutral"`
	OxidationStates map[string]float64 `json:"oxidation_states"`
	// SpaceGroup is the structure's space group at the tolerances asked
	// (by default 0.01 Å and 5°); null when none is found.
	SpaceGroup *spacegroup.Name `json:"space_group"`
	Valid      bool             `json:"valid"`
	Reasons    []string         `json:"reasons"`

	// Report is the full report; nil for an unreadable file.
	Report *ValidityReport `json:"-"`
}

// ValidateFile reads and validates one file and finds its space group at
// the tolerances of sym. A candidate whose formula disagrees with its
// species is reported as formula_mismatch, any other read error as
// unreadable: a bad file is a result, not an error.
func ValidateFile(path string, opt ValidityOptions, sym spacegroup.Options) FileValidation {
	res := FileValidation{File: path, Reasons: []string{}}
	s, err := ReadFile(path)
	if err != nil {
		code := ReasonUnreadable
		if errors.Is(err, ErrFormulaMismatch) {
			code = ReasonFormulaMismatch
		}
		res.Reasons = append(res.Reasons, string(code)+": "+err.Error())
		return res
	}
	r, err := Validate(s, opt)
	if err != nil {
		res.Reasons = append(res.Reasons, string(ReasonUnreadable)+": "+err.Error())
		return res
	}
	res.Report = r
	res.SpaceGroup = s.SpaceGroupName(sym)
	res.Formula, res.ReducedFormula, res.ChemicalSystem = &r.Formula, &r.ReducedFormula, &r.ChemicalSystem
	res.NumAtoms, res.Density, res.Volume = &r.NumAtoms, &r.Density, &r.Volume
	if !math.IsNaN(r.MinDistance) {
		res.MinDistance = &r.MinDistance
	}
	if v := r.Chemistry; v != nil {
		class, neutral := string(v.Class), len(v.Assignments) > 0
		res.Class, res.ChargeNeutral = &class, &neutral
	}
	if r.Oxidation != nil {
		res.ChargeNeutral = &r.Oxidation.Neutral
	}
	res.OxidationStates = r.OxidationStates()
	res.Valid = r.Valid()
	res.Reasons = append(res.Reasons, r.Reasons()...)
	return res
}

// WriteText writes the file name, then a table of what was measured, the
// verdict and every reason.
func (v FileValidation) WriteText(w io.Writer) error {
	fmt.Fprintln(w, v.File)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if rep := v.Report; rep != nil {
		fmt.Fprintf(tw, "  formula\t%s\n", rep.Formula)
		fmt.Fprintf(tw, "  reduced formula\t%s\n", rep.ReducedFormula)
		fmt.Fprintf(tw, "  atoms\t%d\n", rep.NumAtoms)
		fmt.Fprintf(tw, "  density\t%.4f g/cm³\n", rep.Density)
		fmt.Fprintf(tw, "  volume\t%.4f Å³ (%.3f Å³/atom)\n", rep.Volume, rep.VolumePerAtom)
		if math.IsNaN(rep.MinDistance) {
			fmt.Fprintf(tw, "  min distance\tunknown\n")
		} else {
			p, e := rep.MinDistancePair, rep.MinDistanceElements
			fmt.Fprintf(tw, "  min distance\t%.4f Å (%s, site %d – %s, site %d)\n", rep.MinDistance, e[0], p[0], e[1], p[1])
		}
		fmt.Fprintf(tw, "  chemical system\t%s\n", rep.ChemicalSystem)
		if g := v.SpaceGroup; g != nil {
			fmt.Fprintf(tw, "  space group\t%s\n", g)
		} else {
			fmt.Fprintf(tw, "  space group\tnone found\n")
		}
		if c := rep.Chemistry; c != nil {
			fmt.Fprintf(tw, "  class\t%s\n", c.Class)
			fmt.Fprintf(tw, "  charge neutral\t%s\n", c.NeutralText())
		} else {
			fmt.Fprintf(tw, "  charge neutral\t%s\n", rep.Oxidation.NeutralText())
		}
	}
	valid := "no"
	if v.Valid {
		valid = "yes"
	}
	fmt.Fprintf(tw, "  valid\t%s\n", valid)
	for _, reason := range v.Reasons {
		fmt.Fprintf(tw, "  reason\t%s\n", reason)
	}
	return tw.Flush()
}

// FormulaVerdict is the chemistry verdict on one formula, as "crucible
// validate --formula" reports it.
type FormulaVerdict struct {
	Formula         string             `json:"formula"`
	Valid           bool               `json:"valid"`
	Class           BondingClass       `json:"class,omitempty"`
	OxidationStates map[string]float64 `json:"oxidation_states,omitempty"`
	Reasons         []CodedReason      `json:"reasons"`
	Detail          string             `json:"detail,omitempty"`

	// Assignment is the best assignment of oxidation states,
	// "Fe2+:1 Fe3+:2 O2-:4", when one was found.
	Assignment string `json:"-"`
}

// CodedReason is a reason with its stable code apart.
type CodedReason struct {
	Code   ReasonCode `json:"code"`
	Detail string     `json:"detail"`
}

// ValidateFiles validates every file (ValidateFile) and counts the
// invalid or unreadable ones.
func ValidateFiles(paths []string, opt ValidityOptions, sym spacegroup.Options) (vs []FileValidation, bad int) {
	vs = make([]FileValidation, len(paths))
	for i, path := range paths {
		if vs[i] = ValidateFile(path, opt, sym); !vs[i].Valid {
			bad++
		}
	}
	return vs, bad
}

// JudgeFormulas judges every formula and counts the invalid or
// unparsable ones.
func JudgeFormulas(formulas []string) (vs []FormulaVerdict, bad int) {
	vs = make([]FormulaVerdict, len(formulas))
	for i, f := range formulas {
		if vs[i] = JudgeFormula(f); !vs[i].Valid {
			bad++
		}
	}
	return vs, bad
}

// JudgeFormula parses and judges one formula; an unparsable one is invalid
// with the reason unreadable.
func JudgeFormula(formula string) FormulaVerdict {
	res := FormulaVerdict{Formula: formula, Reasons: []CodedReason{}}
	c, err := ParseFormula(formula)
	var v *ChemistryVerdict
	if err == nil {
		v, err = JudgeComposition(c, ChemistryOptions{})
	}
	if err != nil {
		res.Reasons = append(res.Reasons, CodedReason{Code: ReasonUnreadable, Detail: err.Error()})
		return res
	}
	res.Valid, res.Class, res.Detail = v.Valid, v.Class, v.Detail
	res.OxidationStates = v.OxidationStates()
	if best, ok := v.Best(); ok {
		res.Assignment = best.String()
	}
	if !v.Valid {
		res.Reasons = append(res.Reasons, CodedReason{Code: v.Code, Detail: v.Detail})
	}
	return res
}

// Summary is the verdict in a few words: the best assignment of
// oxidation states, else the first reason, else the detail.
func (v FormulaVerdict) Summary() string {
	what := v.Assignment
	switch {
	case len(v.Reasons) > 0:
		what = string(v.Reasons[0].Code) + ": " + v.Reasons[0].Detail
	case what == "":
		what = v.Detail
	}
	return what
}

// FormulaInputs is what "crucible validate --formula" judges: the
// formulas given, followed by those of file (ReadFormulaList) when it is
// not empty; an empty list is an error.
func FormulaInputs(formulas []string, file string) ([]string, error) {
	if file != "" {
		more, err := ReadFormulaList(file)
		if err != nil {
			return nil, fmt.Errorf("--formulas: %w", err)
		}
		formulas = append(formulas, more...)
	}
	if len(formulas) == 0 {
		return nil, errors.New("no formulas to validate")
	}
	return formulas, nil
}

// ReadFormulaList reads one formula per line, skipping blank lines and
// lines starting with #.
func ReadFormulaList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// NeutralText says in words whether an assignment balanced the charges:
// "yes (Na+ Cl-)", "yes (only metals: …)", "no (…)", "not checked".
func (a *OxidationAnalysis) NeutralText() string {
	switch {
	case a == nil:
		return "not checked"
	case a.Alloy:
		return "yes (only metals: an intermetallic, all oxidation states 0)"
	case a.Elemental:
		return "yes (one element, oxidation state 0)"
	case a.Neutral:
		best, _ := a.Best()
		return "yes (" + best.String() + moreAssignments(len(a.Assignments)) + ")"
	}
	return "no (" + strings.TrimSpace(string(a.Reason)) + ")"
}

// NeutralText says whether the verdict balanced the charges, and how:
// "yes (Na+ Cl-)", "no (charge_neutrality)", "no ionic assignment; …".
func (v *ChemistryVerdict) NeutralText() string {
	if best, ok := v.Best(); ok {
		return "yes (" + best.String() + moreAssignments(len(v.Assignments)) + ")"
	}
	switch {
	case !v.Valid:
		return "no (" + string(v.Code) + ")"
	case v.Class == ClassIntermetallic:
		return "yes (only metals: all oxidation states 0)"
	}
	return "no ionic assignment; " + v.Detail
}

func moreAssignments(n int) string {
	if n > 1 {
		return fmt.Sprintf("; %d assignments found", n)
	}
	return ""
}

// WriteFileValidations writes the validations as "crucible validate" does:
// one JSON object per line with asJSON, else each file's table
// (FileValidation.WriteText), a blank line between files.
func WriteFileValidations(w io.Writer, vs []FileValidation, asJSON bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, v := range vs {
		var err error
		switch {
		case asJSON:
			err = enc.Encode(v)
		case i > 0:
			if _, err = fmt.Fprintln(w); err == nil {
				err = v.WriteText(w)
			}
		default:
			err = v.WriteText(w)
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", v.File, err)
		}
	}
	return nil
}

// WriteFormulaVerdicts writes the verdicts as "crucible validate
// --formula" does: one JSON object per line with asJSON, else a table of
// formula, validity, class and the oxidation states or the reason.
func WriteFormulaVerdicts(w io.Writer, vs []FormulaVerdict, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, v := range vs {
			if err := enc.Encode(v); err != nil {
				return fmt.Errorf("write %s: %w", v.Formula, err)
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FORMULA\tVALID\tCLASS\tOXIDATION STATES OR REASON")
	for _, v := range vs {
		class, valid := string(v.Class), "no"
		if class == "" {
			class = "-"
		}
		if v.Valid {
			valid = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Formula, valid, class, v.Summary())
	}
	return tw.Flush()
}
