package crystal

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ReasonCode is the stable name of a way a structure can fail validation,
// so a pipeline can count failure kinds. The codes are part of Crucible's
// interface: never rename one.
type ReasonCode string

const (
	// ReasonOverlap: two atoms (or an atom and its own periodic image) are
	// closer than the minimum distance.
	ReasonOverlap ReasonCode = "overlap"
	// ReasonTooManyAtoms: more atoms in the cell than allowed.
	ReasonTooManyAtoms ReasonCode = "too_many_atoms"
	// ReasonVolumePerAtom: the volume per atom is outside the sane range.
	ReasonVolumePerAtom ReasonCode = "volume_per_atom"
	// ReasonFormulaMismatch: the stated formula disagrees with the sites.
	ReasonFormulaMismatch ReasonCode = "formula_mismatch"
	// ReasonChargeNeutrality: no assignment of the allowed oxidation states
	// sums to zero.
	ReasonChargeNeutrality ReasonCode = "charge_neutrality"
	// ReasonElectronegativity: assignments sum to zero, but each makes a
	// cation at least as electronegative as an anion.
	ReasonElectronegativity ReasonCode = "electronegativity"
	// ReasonBadCell: the cell is too thin or sheared for the neighbour
	// search (reduce it first).
	ReasonBadCell ReasonCode = "bad_cell"
	// ReasonUnreadable: the structure could not be read or parsed at all.
	// Validate never returns it; readers and the CLI use it so every
	// failure kind has a code.
	ReasonUnreadable ReasonCode = "unreadable"
)

// Sentinel errors matching each ReasonCode, for errors.Is on
// ValidityReport.Err. ReasonFormulaMismatch maps to ErrFormulaMismatch,
// which the LLM candidate reader returns for the same condition.
var (
	ErrOverlap           = errors.New("atoms overlap")
	ErrTooManyAtoms      = errors.New("too many atoms")
	ErrVolumePerAtom     = errors.New("volume per atom out of range")
	ErrNotChargeNeutral  = errors.New("not charge neutral")
	ErrElectronegativity = errors.New("cation more electronegative than anion")
	ErrBadCell           = errors.New("cell unsuitable for neighbour search")
	ErrUnreadable        = errors.New("structure unreadable")
)

var reasonSentinels = map[ReasonCode]error{
	ReasonOverlap:           ErrOverlap,
	ReasonTooManyAtoms:      ErrTooManyAtoms,
	ReasonVolumePerAtom:     ErrVolumePerAtom,
	ReasonFormulaMismatch:   ErrFormulaMismatch,
	ReasonChargeNeutrality:  ErrNotChargeNeutral,
	ReasonElectronegativity: ErrElectronegativity,
	ReasonBadCell:           ErrBadCell,
	ReasonUnreadable:        ErrUnreadable,

	ReasonElectronCount:          ErrElectronCount,
	ReasonImplausibleComposition: ErrImplausibleComposition,
}

// ValidityError is one failed check as an error; errors.Is matches the
// sentinel of its code (ErrOverlap for ReasonOverlap, …).
type ValidityError struct {
	Code   ReasonCode
	Detail string
}

func (e *ValidityError) Error() string { return string(e.Code) + ": " + e.Detail }

// Is reports whether target is the sentinel of e's code.
func (e *ValidityError) Is(target error) bool {
	s, ok := reasonSentinels[e.Code]
	return ok && s == target
}

// Names of the checks in a ValidityReport.
const (
	CheckMinDistance   = "min_distance"
	CheckNumAtoms      = "num_atoms"
	CheckVolumePerAtom = "volume_per_atom"
	CheckFormula       = "formula"
	// CheckChemistry is the chemistry verdict (JudgeComposition).
	CheckChemistry = "chemistry"
	// CheckChargeNeutrality is the plain ionic test that replaces it with
	// ValidityOptions.IonicOnly.
	CheckChargeNeutrality = "charge_neutrality"
)

// Defaults of ValidityOptions.
const (
	// DefaultMinDistance (Å) is Materealize's interatomic-distance validity
	// threshold (structure-generation benchmark, Fig. 5c: "minimum
	// interatomic distance > 0.5 Å"), the structural-validity test of
	// CDVAE (Xie et al., ICLR 2022) and its successors. The shortest real
	// bond, H–H in H2, is 0.74 Å.
	DefaultMinDistance = 0.5
	// DefaultMaxAtoms bounds the cell. Proposed candidates are small cells
	// (LLM answers and the prototype library have at most tens of atoms;
	// the largest golden CGCNN structures 100), the cost of surrogate
	// evaluation grows with the cell, and a cell of hundreds of atoms is
	// almost always a mis-built supercell.
	DefaultMaxAtoms = 200
	// DefaultMinVolumePerAtom (Å³/atom): diamond, the solid with the most
	// atoms per volume at ambient pressure, has 5.67 Å³/atom (a = 3.567 Å,
	// 8 atoms); c-BN 5.90, Be 8.1. A cell denser than 5 Å³/atom is
	// compressed beyond any known solid.
	DefaultMinVolumePerAtom = 5.0
	// DefaultMaxVolumePerAtom (Å³/atom): caesium, the element with the
	// largest atomic volume, has 114 Å³/atom (1.93 g/cm³, CRC Handbook);
	// ionic solids and frameworks lie far below (CsI 48, zeolites 20–30).
	// Above 150 Å³/atom a cell is an exploded or mis-scaled structure.
	DefaultMaxVolumePerAtom = 150.0
)

// ValidityOptions configure Validate. The zero value applies every check
// with the defaults above; a negative limit disables that check.
type ValidityOptions struct {
	// MinDistance is the smallest allowed distance between two atoms,
	// periodic images included (Å; default DefaultMinDistance).
	MinDistance float64
	// MaxAtoms is the largest allowed number of sites (default
	// DefaultMaxAtoms).
	MaxAtoms int
	// MinVolumePerAtom and MaxVolumePerAtom bound the cell volume divided
	// by the number of sites (Å³/atom; defaults DefaultMinVolumePerAtom and
	// DefaultMaxVolumePerAtom).
	MinVolumePerAtom, MaxVolumePerAtom float64
	// SkipChargeNeutrality turns the composition check (chemistry verdict
	// or, with IonicOnly, charge neutrality) off.
	SkipChargeNeutrality bool
	// Chemistry bounds the chemistry verdict's search.
	Chemistry ChemistryOptions
	// IonicOnly replaces the chemistry verdict by charge neutrality alone,
	// AssignOxidationStates with Oxidation (default: SMACT's common states,
	// one per element, Pauling test, alloys accepted), for every
	// composition whatever its bonding; it rejects a third of the
	// Materials Project's stable compounds.
	IonicOnly bool
	// Oxidation configures the charge-neutrality check of IonicOnly.
	Oxidation OxidationOptions
	// ExpectedFormula, when set, is a formula stated alongside the
	// structure (the "formula" field of an LLM answer). It must have the
	// same reduced composition as the sites: "Fe2O3" agrees with a cell
	// of Fe4O6.
	ExpectedFormula string
}

func (o ValidityOptions) withDefaults() ValidityOptions {
	if o.MinDistance == 0 {
		o.MinDistance = DefaultMinDistance
	}
	if o.MaxAtoms == 0 {
		o.MaxAtoms = DefaultMaxAtoms
	}
	if o.MinVolumePerAtom == 0 {
		o.MinVolumePerAtom = DefaultMinVolumePerAtom
	}
	if o.MaxVolumePerAtom == 0 {
		o.MaxVolumePerAtom = DefaultMaxVolumePerAtom
	}
	return o
}

// ValidityCheck is the outcome of one check.
type ValidityCheck struct {
	// Name is one of the Check* constants.
	Name string
	// Passed is true when the structure satisfies the check.
	Passed bool
	// Code names the failure; empty when Passed.
	Code ReasonCode
	// Value is the measured quantity where there is one (Å, atoms,
	// Å³/atom); NaN otherwise.
	Value float64
	// Detail states the measurement and the limit, or why the check failed.
	Detail string
}

// ValidityReport is the outcome of Validate: the structure's basic facts and
// every check, failed or passed.
type ValidityReport struct {
	Formula        string // cell formula, "Na4Cl4"
	ReducedFormula string // "NaCl"
	ChemicalSystem string // "Cl-Na"
	NumAtoms       int
	Volume         float64 // Å³
	VolumePerAtom  float64 // Å³/atom
	Density        float64 // g/cm³
	// MinDistance is the smallest interatomic distance (Å), periodic
	// images included; NaN when it could not be computed.
	MinDistance float64
	// MinDistancePair are the two sites at MinDistance (equal for an atom
	// and its own image), and MinDistanceElements their elements.
	MinDistancePair     [2]int
	MinDistanceElements [2]Element
	// Chemistry is the chemistry verdict on the composition, nil when
	// skipped or with IonicOnly.
	Chemistry *ChemistryVerdict
	// Oxidation is the charge-neutrality analysis of IonicOnly, nil
	// otherwise.
	Oxidation *OxidationAnalysis
	// Checks lists every check in a fixed order.
	Checks []ValidityCheck
}

// Valid reports whether every check passed.
func (r *ValidityReport) Valid() bool {
	for _, c := range r.Checks {
		if !c.Passed {
			return false
		}
	}
	return true
}

// Failed returns the checks that failed, in order.
func (r *ValidityReport) Failed() []ValidityCheck {
	var out []ValidityCheck
	for _, c := range r.Checks {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// Reasons returns one "code: detail" line per failed check, e.g.
// "overlap: sites 0 (Na) and 3 (Cl) are 0.31 Å apart, minimum 0.5 Å".
func (r *ValidityReport) Reasons() []string {
	var out []string
	for _, c := range r.Failed() {
		out = append(out, string(c.Code)+": "+c.Detail)
	}
	return out
}

// Codes returns the codes of the failed checks, in order.
func (r *ValidityReport) Codes() []ReasonCode {
	var out []ReasonCode
	for _, c := range r.Failed() {
		out = append(out, c.Code)
	}
	return out
}

// Err returns nil for a valid structure, and otherwise the failed checks
// joined as *ValidityError values, so errors.Is(r.Err(), ErrOverlap) tells
// whether atoms overlap.
func (r *ValidityReport) Err() error {
	var errs []error
	for _, c := range r.Failed() {
		errs = append(errs, &ValidityError{Code: c.Code, Detail: c.Detail})
	}
	return errors.Join(errs...)
}

// Class is the composition's bonding class, "" when the chemistry
// verdict was skipped or replaced by IonicOnly.
func (r *ValidityReport) Class() BondingClass {
	if r.Chemistry == nil {
		return ""
	}
	return r.Chemistry.Class
}

// OxidationStates returns the best neutral assignment's mean state per
// element symbol, or nil when there is none (or the check was skipped).
func (r *ValidityReport) OxidationStates() map[string]float64 {
	if r.Chemistry != nil {
		return r.Chemistry.OxidationStates()
	}
	if r.Oxidation == nil {
		return nil
	}
	best, ok := r.Oxidation.Best()
	if !ok {
		return nil
	}
	return best.States()
}

// Validate runs every check on s and reports all of them, failed or not:
//
//   - min_distance: the shortest distance between two sites, periodic
//     images included (so a one-atom cell is measured against its own
//     image), must be at least MinDistance (code overlap);
//   - num_atoms: at most MaxAtoms sites (too_many_atoms);
//   - volume_per_atom: within [MinVolumePerAtom, MaxVolumePerAtom]
//     (volume_per_atom);
//   - formula: when ExpectedFormula is set, it parses and has the reduced
//     composition of the sites (formula_mismatch);
//   - chemistry: unless skipped, JudgeComposition finds the composition
//     valid for its bonding class (charge_neutrality, electronegativity,
//     electron_count or implausible_composition); with IonicOnly, the check
//     charge_neutrality instead: AssignOxidationStates finds a neutral
//     assignment (charge_neutrality or electronegativity).
//
// The error is non-nil only when s is not a structure at all (nil, no
// sites, mismatched lists); a structure that fails checks is reported, not
// an error.
func Validate(s *Structure, opt ValidityOptions) (*ValidityReport, error) {
	if s == nil {
		return nil, fmt.Errorf("validate: %w: nil structure", ErrBadStructure)
	}
	if s.Lattice.Volume() == 0 || len(s.Species) == 0 || len(s.Species) != len(s.Frac) {
		return nil, fmt.Errorf("validate: %w: %d species, %d coordinates, cell volume %g Å³",
			ErrBadStructure, len(s.Species), len(s.Frac), s.Lattice.Volume())
	}
	opt = opt.withDefaults()
	comp := s.Composition()
	r := &ValidityReport{
		Formula:        cellFormula(comp),
		ReducedFormula: comp.ReducedFormula(),
		ChemicalSystem: comp.ChemicalSystem(),
		NumAtoms:       s.NumSites(),
		Volume:         s.Volume(),
		VolumePerAtom:  s.VolumePerAtom(),
		Density:        s.Density(),
		MinDistance:    math.NaN(),
	}
	r.Checks = append(r.Checks, r.checkMinDistance(s, opt.MinDistance))
	r.Checks = append(r.Checks, checkNumAtoms(r.NumAtoms, opt.MaxAtoms))
	r.Checks = append(r.Checks, checkVolumePerAtom(r.VolumePerAtom, opt.MinVolumePerAtom, opt.MaxVolumePerAtom))
	if opt.ExpectedFormula != "" {
		r.Checks = append(r.Checks, checkFormula(comp, opt.ExpectedFormula))
	}
	switch {
	case opt.SkipChargeNeutrality:
	case opt.IonicOnly:
		r.Checks = append(r.Checks, r.checkChargeNeutrality(comp, opt.Oxidation))
	default:
		r.Checks = append(r.Checks, r.checkChemistry(comp, opt.Chemistry))
	}
	return r, nil
}

// cellFormula writes the composition of a cell by increasing
// electronegativity (ties by symbol) without spaces or unit amounts:
// "Na4Cl4", "SrTiO3".
func cellFormula(c Composition) string {
	items := c.Items()
	slices.SortStableFunc(items, func(a, b ElementAmount) int {
		if xa, xb := a.Element.X(), b.Element.X(); xa != xb {
			if xa < xb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Element.Symbol(), b.Element.Symbol())
	})
	var sb strings.Builder
	for _, it := range items {
		sb.WriteString(it.Element.Symbol())
		sb.WriteString(formatAmount(it.Amount, true))
	}
	return sb.String()
}

// MinimumDistance returns the shortest distance (Å) between two sites of s,
// periodic images included, and the two sites (equal when an atom is
// closest to its own image).
//
// A periodic packing of N equal spheres of diameter d in a cell of volume V
// fills at most π/√18 of it (Hales' theorem), so d ≤ (√2 V/N)^(1/3) ≈
// 1.123 (V/N)^(1/3): a neighbour search with cutoff 1.2 (V/N)^(1/3) always
// finds the closest pair. The cutoff still grows if none is found.
func MinimumDistance(s *Structure) (float64, [2]int, error) {
	var f NeighborFinder
	var nl NeighborList
	cutoff := 1.2 * math.Cbrt(s.VolumePerAtom())
	for attempt := 0; attempt < 8; attempt++ {
		if err := f.Find(s, cutoff, 1, &nl); err != nil {
			return math.NaN(), [2]int{}, err
		}
		best, pair := math.Inf(1), [2]int{}
		for i := 0; i < nl.NumSites(); i++ {
			if nb := nl.Of(i); len(nb) > 0 && nb[0].Distance < best {
				best, pair = nb[0].Distance, [2]int{i, nb[0].Index}
			}
		}
		if !math.IsInf(best, 1) {
			return best, pair, nil
		}
		cutoff *= 2
	}
	return math.NaN(), [2]int{}, fmt.Errorf("%w: no neighbour within %.3g Å", ErrBadCell, cutoff)
}

func (r *ValidityReport) checkMinDistance(s *Structure, limit float64) ValidityCheck {
	c := ValidityCheck{Name: CheckMinDistance, Value: math.NaN()}
	d, pair, err := MinimumDistance(s)
	if err != nil {
		c.Code = ReasonBadCell
		c.Detail = fmt.Sprintf("cannot measure interatomic distances: %v", err)
		return c
	}
	r.MinDistance, r.MinDistancePair, c.Value = d, pair, d
	r.MinDistanceElements = [2]Element{s.Species[pair[0]], s.Species[pair[1]]}
	where := fmt.Sprintf("sites %d (%s) and %d (%s) are %.3f Å apart", pair[0], s.Species[pair[0]], pair[1], s.Species[pair[1]], d)
	if pair[0] == pair[1] {
		where = fmt.Sprintf("site %d (%s) is %.3f Å from its own periodic image", pair[0], s.Species[pair[0]], d)
	}
	if limit < 0 {
		c.Passed = true
		c.Detail = where + "; no minimum set"
		return c
	}
	if d >= limit {
		c.Passed = true
		c.Detail = fmt.Sprintf("%s; minimum %.3g Å", where, limit)
		return c
	}
	c.Code = ReasonOverlap
	c.Detail = fmt.Sprintf("%s, closer than the minimum %.3g Å", where, limit)
	return c
}

func checkNumAtoms(n, limit int) ValidityCheck {
	c := ValidityCheck{Name: CheckNumAtoms, Value: float64(n)}
	if limit < 0 || n <= limit {
		c.Passed = true
		c.Detail = fmt.Sprintf("%d atoms", n)
		if limit >= 0 {
			c.Detail += fmt.Sprintf(", at most %d", limit)
		}
		return c
	}
	c.Code = ReasonTooManyAtoms
	c.Detail = fmt.Sprintf("%d atoms in the cell, more than the limit of %d", n, limit)
	return c
}

func checkVolumePerAtom(v, lo, hi float64) ValidityCheck {
	c := ValidityCheck{Name: CheckVolumePerAtom, Value: v}
	switch {
	case lo >= 0 && v < lo:
		c.Code = ReasonVolumePerAtom
		c.Detail = fmt.Sprintf("%.3g Å³/atom, denser than the minimum %.3g Å³/atom", v, lo)
	case hi >= 0 && v > hi:
		c.Code = ReasonVolumePerAtom
		c.Detail = fmt.Sprintf("%.4g Å³/atom, larger than the maximum %.4g Å³/atom", v, hi)
	default:
		c.Passed = true
		c.Detail = fmt.Sprintf("%.4g Å³/atom", v)
		if lo >= 0 || hi >= 0 {
			c.Detail += fmt.Sprintf(", within [%s, %s]", boundText(lo), boundText(hi))
		}
	}
	return c
}

// boundText writes a limit, or "none" for a disabled (negative) one.
func boundText(x float64) string {
	if x < 0 {
		return "none"
	}
	return fmt.Sprintf("%.4g", x)
}

func checkFormula(comp Composition, expected string) ValidityCheck {
	c := ValidityCheck{Name: CheckFormula, Value: math.NaN(), Code: ReasonFormulaMismatch}
	want, err := ParseFormula(expected)
	if err != nil {
		c.Detail = fmt.Sprintf("stated formula %q cannot be parsed: %v", expected, err)
		return c
	}
	if !want.SameReduced(comp) {
		c.Detail = fmt.Sprintf("stated formula %s (%s) but the sites are %s (%s)",
			expected, want.ReducedFormula(), cellFormula(comp), comp.ReducedFormula())
		return c
	}
	c.Passed, c.Code = true, ""
	c.Detail = fmt.Sprintf("stated formula %s agrees with the sites", expected)
	return c
}

func (r *ValidityReport) checkChemistry(comp Composition, opt ChemistryOptions) ValidityCheck {
	c := ValidityCheck{Name: CheckChemistry, Value: math.NaN()}
	v, err := JudgeComposition(comp, opt)
	if err != nil {
		c.Code = ReasonChargeNeutrality
		c.Detail = err.Error()
		return c
	}
	r.Chemistry = v
	c.Passed, c.Code, c.Detail = v.Valid, v.Code, v.Detail
	return c
}

func (r *ValidityReport) checkChargeNeutrality(comp Composition, opt OxidationOptions) ValidityCheck {
	c := ValidityCheck{Name: CheckChargeNeutrality, Value: math.NaN()}
	ox, err := AssignOxidationStates(comp, opt)
	if err != nil {
		c.Code = ReasonChargeNeutrality
		c.Detail = err.Error()
		return c
	}
	r.Oxidation = ox
	c.Detail = ox.Detail
	if ox.Neutral {
		c.Passed = true
		return c
	}
	c.Code = ox.Reason
	return c
}
