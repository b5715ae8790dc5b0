package crystal

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

var (
	// ErrPartialOccupancy is returned for disordered sites: an occupancy
	// below 1 (beyond CIFOccupancyTolerance), or two atoms sharing a
	// position. Crucible handles ordered structures only.
	ErrPartialOccupancy = errors.New("partial occupancy")
	// ErrNoSymmetryOperations is returned for a CIF that lists no symmetry
	// operations and names its space group by a symbol or number that
	// cannot give them: an unknown or malformed symbol, or a number that
	// disagrees with the symbol.
	ErrNoSymmetryOperations = errors.New("space group gives no symmetry operations")
	// ErrTooManySites is returned when a file describes more than MaxReadSites
	// atoms (after symmetry expansion, for a CIF).
	ErrTooManySites = errors.New("too many sites")
)

const (
	// MaxReadSites is the largest number of sites the readers build; larger
	// inputs are rejected with ErrTooManySites rather than exhausting
	// memory. Far above any structure Crucible evaluates.
	MaxReadSites = 5000
	// CIFSiteTolerance is the distance, per fractional coordinate and under
	// periodic boundary conditions, below which two symmetry images are the
	// same site: pymatgen's CifParser site_tolerance (1e-4), with the same
	// per-axis test as its in_coord_list_pbc.
	CIFSiteTolerance = 1e-4
	// CIFOccupancyTolerance is how far an occupancy may be from 1 and still
	// count as a fully occupied site.
	CIFOccupancyTolerance = 1e-3
	// maxCIFSymOps bounds the symmetry operations of a block: 192 is the
	// largest space group order in a conventional setting; 1536 leaves room
	// for non-standard (supercell) settings.
	maxCIFSymOps = 1536
	// maxCIFExpansion bounds asymmetric sites × operations, the work of
	// symmetry expansion.
	maxCIFExpansion = 1 << 20
)

// ParseCIF reads the crystal structure of the first data block that has
// atom sites (see CIFBlock.Structure). Errors name the data block.
func ParseCIF(data []byte) (*Structure, error) {
	blocks, err := ParseCIFBlocks(data)
	if err != nil {
		return nil, err
	}
	for _, b := range blocks {
		if !b.HasAtoms() {
			continue
		}
		s, err := b.Structure()
		if err != nil {
			return nil, fmt.Errorf("data block %q: %w", b.Name, err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: no data block lists atom sites (_atom_site_fract_x …)", ErrBadCIF)
}

// HasAtoms reports whether the block lists atom sites.
func (b *CIFBlock) HasAtoms() bool {
	for _, t := range []string{"_atom_site_fract_x", "_atom_site_cartn_x", "_atom_site_label", "_atom_site_type_symbol"} {
		if b.has(t) {
			return true
		}
	}
	return false
}

// cifSite is one atom of the asymmetric unit.
type cifSite struct {
	label string
	el    Element
	frac  Vec3
}

// Structure builds the crystal structure the block describes, as pymatgen's
// CifParser(...).get_structures(primitive=False) does:
//
//   - The cell from _cell_length_a/b/c and _cell_angle_alpha/beta/gamma
//     (angles default to 90°, the CIF dictionary default), oriented as
//     pymatgen's Lattice.from_parameters (LatticeFromParameters).
//   - Sites from the _atom_site loop; the element from _atom_site_type_symbol
//     when given (charges stripped: "Fe3+" → Fe), else from _atom_site_label
//     (pymatgen's rule: the first two letters if they are an element, else
//     the first: "Fe1a" → Fe, "Co2" → Co, "C12" → C, "O1" → O); D is H.
//     Elements beyond Pu are ErrUnknownElement ("Cm1" is not carbon).
//     Fractional coordinates within 1e-4 (relative) of 1/3 or 2/3 are set
//     to them, as pymatgen does, so that four-digit values such as 0.6667
//     expand cleanly under hexagonal operations; unlike pymatgen, not
//     those written with cifExactDecimals or more decimals (WriteCIF
//     writes 16), which mean what they say: a structure written by WriteCIF
//     reads back as it was, even with a coordinate of 0.33334.
//   - Numbers may carry standard uncertainties ("5.62(1)").
//   - Each site is expanded by the symmetry operations
//     (_symmetry_equiv_pos_as_xyz or _space_group_symop_operation_xyz),
//     images are wrapped into [0, 1), and images within CIFSiteTolerance of
//     an earlier image of the same site are dropped. Without an operations
//     loop the operations come from the space group's Hall symbol, HM
//     symbol or number (see symbolOps; standard settings from package
//     spacegroup); a block naming none is P1. An unknown symbol is
//     ErrNoSymmetryOperations naming it.
//   - Sites are ordered as pymatgen orders them: by electronegativity of
//     the element (stable), then by asymmetric site, then by operation.
//
// Sites with occupancy 0 are skipped (as pymatgen does). An occupancy below
// 1 − CIFOccupancyTolerance, or asymmetric sites of different elements whose
// images coincide (a mixed site), is ErrPartialOccupancy naming the sites;
// one element listed twice at a position is ErrBadCIF. More than
// MaxReadSites atoms is ErrTooManySites. Other problems wrap ErrBadCIF,
// ErrBadLattice or ErrUnknownElement and name the tag or site.
func (b *CIFBlock) Structure() (*Structure, error) {
	lat, err := b.cifLattice()
	if err != nil {
		return nil, err
	}
	ops, err := b.cifSymOps()
	if err != nil {
		return nil, err
	}
	asym, err := b.cifSites()
	if err != nil {
		return nil, err
	}
	if len(asym) == 0 {
		return nil, fmt.Errorf("%w: no occupied atom sites", ErrBadCIF)
	}
	if len(asym)*len(ops) > maxCIFExpansion {
		return nil, fmt.Errorf("%w: %d sites × %d symmetry operations is more than %d to expand",
			ErrTooManySites, len(asym), len(ops), maxCIFExpansion)
	}
	species, frac, err := expandCIFSites(asym, ops)
	if err != nil {
		return nil, err
	}
	sortSitesLikePymatgen(species, frac)
	return NewStructure(lat, species, frac)
}

// cifLattice reads the cell.
func (b *CIFBlock) cifLattice() (Lattice, error) {
	var p [6]float64
	for i, name := range []string{"a", "b", "c", "alpha", "beta", "gamma"} {
		tag := "_cell_length_" + name
		if i >= 3 {
			tag = "_cell_angle_" + name
		}
		v, ok := b.value(tag)
		if !ok {
			if i >= 3 {
				p[i] = 90
				continue
			}
			return Lattice{}, fmt.Errorf("%w: %s is missing", ErrBadCIF, tag)
		}
		x, err := parseCIFNumber(v)
		if err != nil {
			return Lattice{}, fmt.Errorf("%w: %s: %w", ErrBadCIF, tag, err)
		}
		p[i] = x
	}
	l, err := LatticeFromParameters(p[0], p[1], p[2], p[3], p[4], p[5])
	if err == nil {
		err = requireFiniteVolume(l)
	}
	if err != nil {
		return Lattice{}, fmt.Errorf("cell %g %g %g %g %g %g: %w", p[0], p[1], p[2], p[3], p[4], p[5], err)
	}
	return l, nil
}

// requireFiniteVolume rejects cells so large that their volume overflows to
// Inf or NaN (lengths near 1e100 Å), which NewLattice lets through.
func requireFiniteVolume(l Lattice) error {
	if v := l.Volume(); math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("%w: volume overflows (%v)", ErrBadLattice, v)
	}
	return nil
}

// parseCIFNumber reads a CIF number: an optionally signed decimal with an
// optional exponent and an optional standard uncertainty in parentheses
// ("5.62(1)", "-0.1234(5)", "1.2e-3", "0."). NaN, Inf, hexadecimal and
// other forms strconv would accept are rejected.
func parseCIFNumber(v cifValue) (float64, error) {
	if v.null() {
		return 0, fmt.Errorf("value is unknown (%s)", v.text)
	}
	s := strings.TrimSpace(v.text)
	if i := strings.IndexByte(s, '('); i >= 0 {
		su := strings.TrimSuffix(s[i+1:], ")")
		if su == "" || strings.Trim(su, "0123456789") != "" {
			return 0, fmt.Errorf("bad standard uncertainty in %s", cifQuote(v.text))
		}
		s = s[:i]
	}
	if !isCIFDecimal(s) {
		return 0, fmt.Errorf("%s is not a number", cifQuote(v.text))
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s is out of range", cifQuote(v.text))
	}
	return x, nil
}

// isCIFDecimal reports whether s is [+-]digits[.digits][(e|E)[+-]digits]
// with at least one mantissa digit (".5" and "5." included).
func isCIFDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	_, n := scanUnsignedDecimal(s[i:])
	if n == 0 {
		return false
	}
	i += n
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// cifSymOpTags are the tags that list symmetry operations, in the order
// pymatgen looks for them (the trailing-underscore forms appear in some
// exported files). "." is normalised to "_", so the CIF2/DDLm names
// _space_group_symop.operation_xyz and _symmetry_equiv.pos_as_xyz match.
var cifSymOpTags = []string{
	"_symmetry_equiv_pos_as_xyz",
	"_space_group_symop_operation_xyz",
	"_symmetry_equiv_pos_as_xyz_",
	"_space_group_symop_operation_xyz_",
}

// cifSymOps reads the symmetry operations, or, for a block that lists
// none, generates them from the space-group symbol or number (symbolOps).
func (b *CIFBlock) cifSymOps() ([]cifSymOp, error) {
	for _, tag := range cifSymOpTags {
		vals, ok := b.column(tag)
		if !ok {
			continue
		}
		if len(vals) > maxCIFSymOps {
			return nil, fmt.Errorf("%w: %s lists %d operations, more than %d", ErrBadCIF, tag, len(vals), maxCIFSymOps)
		}
		ops := make([]cifSymOp, 0, len(vals))
		for _, v := range vals {
			if v.null() {
				return nil, fmt.Errorf("%w: line %d: %s: operation is unknown (%s)", ErrBadCIF, v.line, tag, v.text)
			}
			op, err := parseCIFSymOp(v.text)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %s: %w", ErrBadCIF, v.line, tag, err)
			}
			ops = append(ops, op)
		}
		if len(ops) > 0 {
			return uniqueCIFSymOps(ops), nil
		}
	}
	for _, t := range b.order {
		if strings.HasPrefix(t, "_space_group_symop_magn") || strings.HasPrefix(t, "_space_group_magn") {
			return nil, fmt.Errorf("%w: magnetic CIF (%s) is not supported", ErrBadCIF, t)
		}
	}
	return b.symbolOps()
}

// uniqueCIFSymOps drops repeated operations (equal rotations, translations
// equal modulo lattice translations): they only add images that are dropped
// again, and a file repeating one operation many times would otherwise
// multiply the work of expansion.
func uniqueCIFSymOps(ops []cifSymOp) []cifSymOp {
	out := ops[:0:0]
	for _, op := range ops {
		dup := false
		for _, o := range out {
			if o.rot == op.rot && cifSamePosition(o.trans, op.trans, 1e-9) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, op)
		}
	}
	return out
}

// cifSymbolTags are the tags that name the space group, in the order they
// are used when no operations are listed: the Hall symbol (explicit about
// the origin), then the Hermann–Mauguin symbol, then the number.
var (
	cifHallTags   = []string{"_space_group_name_hall", "_symmetry_space_group_name_hall"}
	cifHMTags     = []string{"_space_group_name_h-m_alt", "_symmetry_space_group_name_h-m", "_space_group_name_h-m"}
	cifNumberTags = []string{"_space_group_it_number", "_symmetry_int_tables_number"}
)

// symbolOps returns the operations of the space group the block names by
// symbol or number, for a block that lists no operations: a Hall symbol is
// read by spacegroup.ParseHall (any valid symbol, tabulated or not); an HM
// symbol or a number gives the tabulated setting (spacegroup.ByHM,
// spacegroup.ByNumber: the standard setting, origin choice 2 and hexagonal
// axes unless the symbol says otherwise). A block naming no space group is
// P1. An unknown or unreadable symbol, or a number that disagrees with the
// symbol, is ErrNoSymmetryOperations naming the tag and the symbol.
func (b *CIFBlock) symbolOps() ([]cifSymOp, error) {
	var (
		ops    []spacegroup.Op
		number int
		from   string
	)
	for _, tag := range cifHallTags {
		sym, ok := b.Value(tag)
		if !ok || strings.TrimSpace(sym) == "" {
			continue
		}
		h, err := spacegroup.ParseHall(sym)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrNoSymmetryOperations, tag, err)
		}
		ops, from = h.Ops, fmt.Sprintf("%s %q", tag, sym)
		if s, err := spacegroup.ByHall(sym); err == nil {
			number = s.Number
		}
		break
	}
	if ops == nil {
		for _, tag := range cifHMTags {
			sym, ok := b.Value(tag)
			if !ok || strings.TrimSpace(sym) == "" {
				continue
			}
			s, err := spacegroup.ByHM(sym)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrNoSymmetryOperations, tag, err)
			}
			ops, number, from = s.Ops(), s.Number, fmt.Sprintf("%s %q", tag, sym)
			break
		}
	}
	for _, tag := range cifNumberTags {
		v, ok := b.value(tag)
		if !ok || v.null() {
			continue
		}
		x, err := parseCIFNumber(v)
		n := int(x)
		if err != nil || float64(n) != x {
			return nil, fmt.Errorf("%w: %s is %q, not a space-group number", ErrNoSymmetryOperations, tag, v.text)
		}
		if ops == nil {
			s, err := spacegroup.ByNumber(n)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrNoSymmetryOperations, tag, err)
			}
			ops, number, from = s.Ops(), n, fmt.Sprintf("%s %d", tag, n)
		} else if number != 0 && n != number {
			return nil, fmt.Errorf("%w: %s names space group %d but %s is %d", ErrNoSymmetryOperations, from, number, tag, n)
		}
		break
	}
	if ops == nil {
		return []cifSymOp{cifIdentity}, nil
	}
	out := make([]cifSymOp, len(ops))
	for i, o := range ops {
		for r := 0; r < 3; r++ {
			for c := 0; c < 3; c++ {
				out[i].rot[r][c] = float64(o.Rot[r][c])
			}
		}
		t := o.T()
		out[i].trans = Vec3{t[0], t[1], t[2]}
	}
	return out, nil
}

var cifIdentity = cifSymOp{rot: [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}

// cifSites reads the asymmetric unit.
func (b *CIFBlock) cifSites() ([]cifSite, error) {
	var coords [3][]cifValue
	for k, axis := range []string{"x", "y", "z"} {
		tag := "_atom_site_fract_" + axis
		vals, ok := b.column(tag)
		if !ok {
			if b.has("_atom_site_cartn_" + axis) {
				return nil, fmt.Errorf("%w: only Cartesian coordinates (_atom_site_Cartn_%s) are given; fractional coordinates are required", ErrBadCIF, axis)
			}
			return nil, fmt.Errorf("%w: %s is missing", ErrBadCIF, tag)
		}
		coords[k] = vals
	}
	n := len(coords[0])
	labels, hasLabels := b.column("_atom_site_label")
	types, hasTypes := b.column("_atom_site_type_symbol")
	occs, hasOccs := b.column("_atom_site_occupancy")
	for _, c := range []struct {
		tag  string
		vals []cifValue
		has  bool
	}{
		{"_atom_site_fract_y", coords[1], true}, {"_atom_site_fract_z", coords[2], true},
		{"_atom_site_label", labels, hasLabels}, {"_atom_site_type_symbol", types, hasTypes},
		{"_atom_site_occupancy", occs, hasOccs},
	} {
		if c.has && len(c.vals) != n {
			return nil, fmt.Errorf("%w: %s has %d values but _atom_site_fract_x has %d", ErrBadCIF, c.tag, len(c.vals), n)
		}
	}
	if !hasLabels && !hasTypes {
		return nil, fmt.Errorf("%w: neither _atom_site_type_symbol nor _atom_site_label gives the elements", ErrBadCIF)
	}
	if n > MaxReadSites {
		return nil, fmt.Errorf("%w: %d atom sites, more than %d", ErrTooManySites, n, MaxReadSites)
	}
	sites := make([]cifSite, 0, n)
	for r := 0; r < n; r++ {
		name := fmt.Sprintf("#%d", r+1)
		if hasLabels && !labels[r].null() {
			name = labels[r].text
		}
		var (
			el  Element
			err error
		)
		switch {
		case hasTypes && !types[r].null():
			el, err = cifElement(types[r].text, true)
		case hasLabels && !labels[r].null():
			el, err = cifElement(labels[r].text, false)
		default:
			err = fmt.Errorf("%w: no type symbol or label", ErrUnknownElement)
		}
		if err != nil {
			return nil, fmt.Errorf("atom site %s (line %d): %w", name, coords[0][r].line, err)
		}
		var f Vec3
		for k := range f {
			x, err := parseCIFNumber(coords[k][r])
			if err != nil {
				return nil, fmt.Errorf("%w: atom site %s: _atom_site_fract_%c: %w", ErrBadCIF, name, "xyz"[k], err)
			}
			if cifDecimalPlaces(coords[k][r].text) < cifExactDecimals {
				x = cifSnapThirds(x)
			}
			f[k] = x
		}
		if hasOccs && !occs[r].null() {
			occ, err := parseCIFNumber(occs[r])
			if err != nil {
				return nil, fmt.Errorf("%w: atom site %s: _atom_site_occupancy: %w", ErrBadCIF, name, err)
			}
			switch {
			case occ == 0:
				continue // an empty site, skipped as pymatgen does
			case occ < 0:
				return nil, fmt.Errorf("%w: atom site %s: negative occupancy %g", ErrBadCIF, name, occ)
			case occ < 1-CIFOccupancyTolerance:
				return nil, fmt.Errorf("%w: atom site %s (%s) has occupancy %g; Crucible handles ordered structures only",
					ErrPartialOccupancy, name, el, occ)
			case occ > 1+CIFOccupancyTolerance:
				return nil, fmt.Errorf("%w: atom site %s has occupancy %g, more than 1", ErrBadCIF, name, occ)
			}
		}
		sites = append(sites, cifSite{label: name, el: el, frac: f})
	}
	return sites, nil
}

// cifExactDecimals is the number of decimals from which a fractional
// coordinate is taken as written, never set to 1/3 or 2/3.
const cifExactDecimals = 12

// cifDecimalPlaces is the number of digits after the decimal point of a
// number as written ("0.6667(3)" has 4).
func cifDecimalPlaces(text string) int {
	i := strings.IndexByte(text, '.')
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range text[i+1:] {
		if c < '0' || c > '9' {
			break
		}
		n++
	}
	return n
}

// cifSnapThirds sets coordinates within 1e-4 (relative) of 1/3 or 2/3 to
// those values, as pymatgen's CifParser does: files often give 0.3333 or
// 0.6667, which under hexagonal operations (x−y) would otherwise produce
// images 1e-4 apart.
func cifSnapThirds(x float64) float64 {
	for _, f := range []float64{1.0 / 3, 2.0 / 3} {
		if math.Abs(1-x/f) < 1e-4 {
			return f
		}
	}
	return x
}

// cifHeavySymbols are the elements beyond Crucible's table (Z > 94). A label
// starting with one of them is an unknown element, not its first letter
// ("Cm1" is curium, not carbon).
var cifHeavySymbols = map[string]bool{
	"Am": true, "Cm": true, "Bk": true, "Cf": true, "Es": true, "Fm": true, "Md": true, "No": true,
	"Lr": true, "Rf": true, "Db": true, "Sg": true, "Bh": true, "Hs": true, "Mt": true, "Ds": true,
	"Rg": true, "Cn": true, "Nh": true, "Fl": true, "Mc": true, "Lv": true, "Ts": true, "Og": true,
}

// cifElement reads the element of an atom site from its type symbol
// (typeSymbol: letters then an optional charge, "Fe3+", "O2-", "Na+") or its
// label (letters then anything, "Fe1a", "O2'"). The element is the first two
// letters (capitalised) if they name an element, else the first letter
// (pymatgen's CifParser._parse_symbol); D (deuterium) is H, and "Wat" (a
// water oxygen) is O.
func cifElement(sym string, typeSymbol bool) (Element, error) {
	s := strings.TrimSpace(sym)
	n := 0
	for n < len(s) && (s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z') {
		n++
	}
	what := "label"
	if typeSymbol {
		what = "type symbol"
		if rest := s[n:]; strings.Trim(rest, "0123456789.+-") != "" || strings.Count(rest, "+")+strings.Count(rest, "-") > 1 {
			return 0, fmt.Errorf("%w: cannot read an element from %s %s", ErrUnknownElement, what, cifQuote(sym))
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: %s %s does not start with an element symbol", ErrUnknownElement, what, cifQuote(sym))
	}
	letters := s[:n]
	if strings.HasPrefix(strings.ToLower(letters), "wat") {
		return MustElement("O"), nil // water oxygen, not tungsten (pymatgen's special labels)
	}
	if n >= 2 {
		two := strings.ToUpper(letters[:1]) + strings.ToLower(letters[1:2])
		if e, err := ElementBySymbol(two); err == nil {
			return e, nil
		}
		if cifHeavySymbols[two] {
			return 0, fmt.Errorf("%w: %s %s is element %s, beyond Pu", ErrUnknownElement, what, cifQuote(sym), two)
		}
	}
	one := strings.ToUpper(letters[:1])
	if one == "D" {
		one = "H"
	}
	if e, err := ElementBySymbol(one); err == nil {
		return e, nil
	}
	return 0, fmt.Errorf("%w: %s %s", ErrUnknownElement, what, cifQuote(sym))
}

// expandCIFSites applies every operation to every asymmetric site, wraps
// the images into [0, 1) and keeps one image per position. An image that
// falls on an image of another asymmetric site means two atoms share a
// position: ErrPartialOccupancy for different elements (a mixed site),
// ErrBadCIF for a site listed twice.
func expandCIFSites(asym []cifSite, ops []cifSymOp) ([]Element, []Vec3, error) {
	grid := newCIFSiteGrid(CIFSiteTolerance)
	var (
		species []Element
		frac    []Vec3
		owner   []int
	)
	for j, site := range asym {
		for _, op := range ops {
			p := op.apply(site.frac)
			for k := range p {
				p[k] = wrap(p[k])
			}
			if k := grid.find(p); k >= 0 {
				if owner[k] == j {
					continue
				}
				other := asym[owner[k]]
				if other.el != site.el {
					return nil, nil, fmt.Errorf("%w: atom sites %s (%s) and %s (%s) share a position (a mixed site)",
						ErrPartialOccupancy, other.label, other.el, site.label, site.el)
				}
				return nil, nil, fmt.Errorf("%w: atom site %s falls on atom site %s (listed twice?)", ErrBadCIF, site.label, other.label)
			}
			if len(frac) == MaxReadSites {
				return nil, nil, fmt.Errorf("%w: symmetry expansion gives more than %d sites", ErrTooManySites, MaxReadSites)
			}
			grid.add(p)
			species = append(species, site.el)
			frac = append(frac, p)
			owner = append(owner, j)
		}
	}
	return species, frac, nil
}

// cifSiteGrid finds earlier points within a per-axis fractional tolerance
// under periodic boundary conditions in constant time: points are binned in
// cells no smaller than the tolerance, so a match lies in one of the 27
// cells around a point.
type cifSiteGrid struct {
	tol   float64
	n     int
	cells map[[3]int32][]int
	pts   []Vec3
}

func newCIFSiteGrid(tol float64) *cifSiteGrid {
	return &cifSiteGrid{tol: tol, n: int(1 / tol), cells: map[[3]int32][]int{}}
}

func (g *cifSiteGrid) cell(p Vec3) [3]int32 {
	var c [3]int32
	for k := range p {
		i := int(p[k] * float64(g.n))
		c[k] = int32(min(max(i, 0), g.n-1))
	}
	return c
}

// find returns the index of the first point added within the tolerance of
// p (|Δ − round(Δ)| < tol on every axis), or −1. p must lie in [0, 1).
func (g *cifSiteGrid) find(p Vec3) int {
	c := g.cell(p)
	best := -1
	n := int32(g.n)
	for dx := int32(-1); dx <= 1; dx++ {
		for dy := int32(-1); dy <= 1; dy++ {
			for dz := int32(-1); dz <= 1; dz++ {
				key := [3]int32{(c[0] + dx + n) % n, (c[1] + dy + n) % n, (c[2] + dz + n) % n}
				for _, i := range g.cells[key] {
					if (best < 0 || i < best) && cifSamePosition(g.pts[i], p, g.tol) {
						best = i
					}
				}
			}
		}
	}
	return best
}

func (g *cifSiteGrid) add(p Vec3) {
	g.pts = append(g.pts, p)
	c := g.cell(p)
	g.cells[c] = append(g.cells[c], len(g.pts)-1)
}

// cifSamePosition reports whether fractional points a and b differ by less
// than tol on every axis, modulo lattice translations.
func cifSamePosition(a, b Vec3, tol float64) bool {
	for k := range a {
		d := a[k] - b[k]
		d -= math.Round(d)
		if math.Abs(d) >= tol {
			return false
		}
	}
	return true
}

// sortSitesLikePymatgen orders sites stably by the Pauling
// electronegativity of their element, then by symbol, as pymatgen's
// Structure.get_sorted_structure does (Site.__lt__); elements without an
// electronegativity go last.
func sortSitesLikePymatgen(species []Element, frac []Vec3) {
	idx := make([]int, len(species))
	for i := range idx {
		idx[i] = i
	}
	key := func(e Element) float64 {
		if x, ok := e.Electronegativity(); ok {
			return x
		}
		return math.Inf(1)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := species[idx[a]], species[idx[b]]
		if xa, xb := key(ea), key(eb); xa != xb {
			return xa < xb
		}
		return ea.Symbol() < eb.Symbol()
	})
	sp := make([]Element, len(species))
	fr := make([]Vec3, len(frac))
	for i, j := range idx {
		sp[i], fr[i] = species[j], frac[j]
	}
	copy(species, sp)
	copy(frac, fr)
}
