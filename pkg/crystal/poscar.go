package crystal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

var (
	// ErrBadPOSCAR is returned for text that is not a VASP POSCAR (or
	// CONTCAR): a missing or malformed line, a count that is not a
	// positive integer, too few positions. The message names the line.
	ErrBadPOSCAR = errors.New("bad POSCAR")
	// ErrNoSpecies is returned for a VASP 4 POSCAR, which has no species
	// line, when its elements are given nowhere else (see ParsePOSCAR).
	ErrNoSpecies = errors.New("POSCAR names no species")
)

// POSCAROptions adjust how a POSCAR is read.
type POSCAROptions struct {
	// Species are the elements of the count groups, in order, for a VASP 4
	// file, which has no species line (VASP takes them from the POTCAR).
	// When the file has a species line they must agree with it.
	Species []Element
}

// ParsePOSCAR reads a VASP POSCAR or CONTCAR (VASP wiki, "POSCAR"):
//
//	line 1  comment
//	line 2  scaling: one factor, or a negative number giving the cell
//	        volume in Å³, or three per-axis factors (x, y, z)
//	3–5     lattice vectors a, b, c (Å, before scaling)
//	6       species (VASP 5; "Fe_pv" and "Fe/1a2b" are read as Fe)
//	7       atoms per species
//	        optional "Selective dynamics" (first letter S or s)
//	        "Direct" (D, d) or "Cartesian" (C, c, K, k)
//	        one position per atom: three numbers, then three T/F flags
//	        under selective dynamics, then anything (pymatgen writes the
//	        element there)
//
// Cartesian positions are scaled as the lattice is. The flags, and whatever
// follows the positions (the lattice velocities, velocities and
// predictor-corrector blocks of a CONTCAR), are read past and not kept.
// Numbers may use Fortran's D exponent (1.0D-3); NaN and Inf are rejected.
//
// A VASP 4 file (counts directly after the lattice) names its species
// nowhere VASP reads; ParsePOSCAR accepts it when the elements are given
// another way, in this order: POSCAROptions.Species; a comment line that is
// exactly one element symbol per count group (ASE's convention); an element
// symbol after every position, the same within each group (pymatgen's).
// Otherwise the error wraps ErrNoSpecies.
//
// Errors wrap ErrBadPOSCAR (naming the line), ErrNoSpecies, ErrBadLattice,
// ErrUnknownElement, ErrBadStructure or ErrTooManySites (more than
// MaxReadSites atoms). Coordinates are kept as given, sites in file order.
func ParsePOSCAR(data []byte) (*Structure, error) { return POSCAROptions{}.Parse(data) }

// Parse reads a POSCAR as ParsePOSCAR does, with the options.
func (o POSCAROptions) Parse(data []byte) (*Structure, error) {
	p := poscarLines{lines: splitLines(data)}
	if len(p.lines) == 0 || (len(p.lines) == 1 && strings.TrimSpace(p.lines[0]) == "") {
		return nil, fmt.Errorf("%w: empty", ErrBadPOSCAR)
	}
	comment := p.lines[0]
	p.n = 1

	scale, err := p.scale()
	if err != nil {
		return nil, err
	}
	var m [3][3]float64
	for i := range m {
		xs, err := p.numbers(3, "lattice vector "+string("abc"[i]))
		if err != nil {
			return nil, err
		}
		m[i] = [3]float64{xs[0], xs[1], xs[2]}
	}
	factors, err := scaleFactors(scale, m)
	if err != nil {
		return nil, err
	}
	for i := range m {
		for j := range m[i] {
			m[i][j] *= factors[j]
		}
	}
	lat, err := NewLattice(m)
	if err == nil {
		err = requireFiniteVolume(lat)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: lattice (lines 3–5, scaled): %w", ErrBadPOSCAR, err)
	}

	// Species line (VASP 5) or counts (VASP 4).
	fields, lineNo, err := p.next("species or counts")
	if err != nil {
		return nil, err
	}
	var names []Element
	if _, err := strconv.Atoi(fields[0]); err != nil {
		if names, err = poscarSpecies(fields, lineNo); err != nil {
			return nil, err
		}
		if fields, lineNo, err = p.next("counts"); err != nil {
			return nil, err
		}
	}
	counts, total, err := poscarCounts(fields, lineNo)
	if err != nil {
		return nil, err
	}
	if names != nil && len(names) != len(counts) {
		return nil, fmt.Errorf("%w: line %d: %d counts for %d species", ErrBadPOSCAR, lineNo, len(counts), len(names))
	}

	fields, lineNo, err = p.next("coordinate mode")
	if err != nil {
		return nil, err
	}
	selective := fields[0][0] == 'S' || fields[0][0] == 's'
	if selective {
		if fields, lineNo, err = p.next("coordinate mode"); err != nil {
			return nil, err
		}
	}
	var cartesian bool
	switch fields[0][0] {
	case 'C', 'c', 'K', 'k':
		cartesian = true
	case 'D', 'd':
	default:
		return nil, fmt.Errorf("%w: line %d: %q is not a coordinate mode (Direct or Cartesian)", ErrBadPOSCAR, lineNo, fields[0])
	}

	frac := make([]Vec3, total)
	trailing := make([]string, total) // the token after the position (and flags), if any
	for i := range frac {
		fields, lineNo, err := p.next(fmt.Sprintf("position %d of %d", i+1, total))
		if err != nil {
			return nil, err
		}
		want := 3
		if selective {
			want = 6
		}
		if len(fields) < want {
			return nil, fmt.Errorf("%w: line %d: position %d has %d fields, want %d", ErrBadPOSCAR, lineNo, i+1, len(fields), want)
		}
		var x Vec3
		for k := range x {
			if x[k], err = parseFortranFloat(fields[k]); err != nil {
				return nil, fmt.Errorf("%w: line %d: position %d: %w", ErrBadPOSCAR, lineNo, i+1, err)
			}
		}
		if selective {
			for _, f := range fields[3:6] {
				if !isFortranLogical(f) {
					return nil, fmt.Errorf("%w: line %d: position %d: selective-dynamics flag %q is not T or F", ErrBadPOSCAR, lineNo, i+1, f)
				}
			}
		}
		if len(fields) > want {
			trailing[i] = fields[want]
		}
		if cartesian {
			x = lat.Fractional(Vec3{x[0] * factors[0], x[1] * factors[1], x[2] * factors[2]})
		}
		frac[i] = x
	}

	names, err = o.resolveSpecies(names, comment, counts, trailing)
	if err != nil {
		return nil, err
	}
	species := make([]Element, 0, total)
	for g, n := range counts {
		for range n {
			species = append(species, names[g])
		}
	}
	s, err := NewStructure(lat, species, frac)
	if err != nil {
		return nil, err
	}
	if err := requireFinitePositions(s, "positions"); err != nil {
		return nil, err
	}
	return s, nil
}

// resolveSpecies decides the element of each count group: the species line
// (checked against the options), else the options, the comment line, or the
// symbols after the positions, as ParsePOSCAR documents.
func (o POSCAROptions) resolveSpecies(line []Element, comment string, counts []int, trailing []string) ([]Element, error) {
	if len(o.Species) > 0 && len(o.Species) != len(counts) {
		return nil, fmt.Errorf("%w: %d species given for %d count groups", ErrBadPOSCAR, len(o.Species), len(counts))
	}
	if line != nil {
		for i := range o.Species {
			if o.Species[i] != line[i] {
				return nil, fmt.Errorf("%w: species line names %s, %s was given for group %d", ErrBadPOSCAR, line[i], o.Species[i], i+1)
			}
		}
		return line, nil
	}
	if len(o.Species) > 0 {
		for i, e := range o.Species {
			if !e.Valid() {
				return nil, fmt.Errorf("%w: species %d given: %w: atomic number %d", ErrBadPOSCAR, i+1, ErrUnknownElement, int(e))
			}
		}
		return o.Species, nil
	}
	if names, ok := poscarSymbols(strings.Fields(comment)); ok && len(names) == len(counts) {
		return names, nil
	}
	names := make([]Element, len(counts))
	i := 0
	for g, n := range counts {
		for k := range n {
			e, err := poscarSymbol(trailing[i])
			if err != nil || (k > 0 && e != names[g]) {
				return nil, fmt.Errorf("%w: a VASP 4 file (no species line after the lattice); add the species line of VASP 5, "+
					"or give the species (an element symbol per count group on the comment line, or after every position)", ErrNoSpecies)
			}
			names[g] = e
			i++
		}
	}
	return names, nil
}

// poscarSpecies reads a species line.
func poscarSpecies(fields []string, lineNo int) ([]Element, error) {
	fields = uncommented(fields)
	names := make([]Element, len(fields))
	for i, f := range fields {
		e, err := poscarSymbol(f)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: species %d: %w", ErrBadPOSCAR, lineNo, i+1, err)
		}
		names[i] = e
	}
	return names, nil
}

// poscarSymbols reads every field as an element, or reports false.
func poscarSymbols(fields []string) ([]Element, bool) {
	if len(fields) == 0 {
		return nil, false
	}
	names := make([]Element, len(fields))
	for i, f := range fields {
		e, err := poscarSymbol(f)
		if err != nil {
			return nil, false
		}
		names[i] = e
	}
	return names, true
}

// poscarSymbol reads an element as VASP names it: the symbol, optionally
// followed by a POTCAR suffix after "_" or "/" ("Fe_pv", "O/7a3c").
func poscarSymbol(f string) (Element, error) {
	if i := strings.IndexAny(f, "_/"); i > 0 {
		f = f[:i]
	}
	return ElementBySymbol(f)
}

// poscarCounts reads the counts line: positive integers whose sum is at most
// MaxReadSites.
func poscarCounts(fields []string, lineNo int) ([]int, int, error) {
	fields = uncommented(fields)
	if len(fields) == 0 {
		return nil, 0, fmt.Errorf("%w: line %d: no counts", ErrBadPOSCAR, lineNo)
	}
	counts := make([]int, len(fields))
	total := 0
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, 0, fmt.Errorf("%w: line %d: count %d is %q, want a positive integer", ErrBadPOSCAR, lineNo, i+1, f)
		}
		if n > MaxReadSites || total+n > MaxReadSites {
			return nil, 0, fmt.Errorf("%w: line %d: more than %d atoms", ErrTooManySites, lineNo, MaxReadSites)
		}
		counts[i] = n
		total += n
	}
	return counts, total, nil
}

// uncommented drops an inline comment ("!" or "#" and what follows).
func uncommented(fields []string) []string {
	for i, f := range fields {
		if f[0] == '!' || f[0] == '#' {
			return fields[:i]
		}
	}
	return fields
}

// scaleFactors turns the scaling line into a factor per Cartesian axis: a
// positive scale applies to all three, a negative one is the volume the
// cell is scaled to, three values are the per-axis factors.
func scaleFactors(scale []float64, m [3][3]float64) (Vec3, error) {
	if len(scale) == 3 {
		for _, f := range scale {
			if !(f > 0) {
				return Vec3{}, fmt.Errorf("%w: line 2: per-axis scaling factors %v must be positive", ErrBadPOSCAR, scale)
			}
		}
		return Vec3{scale[0], scale[1], scale[2]}, nil
	}
	s := scale[0]
	switch {
	case s > 0:
		return Vec3{s, s, s}, nil
	case s < 0:
		vol := math.Abs(Vec3(m[0]).Dot(Vec3(m[1]).Cross(Vec3(m[2]))))
		f := math.Cbrt(-s / vol)
		if !(vol >= minLatticeVolume) || math.IsInf(f, 0) || math.IsNaN(f) || f == 0 {
			return Vec3{}, fmt.Errorf("%w: line 2: cannot scale a cell of volume %.3g Å³ to %g Å³", ErrBadLattice, vol, -s)
		}
		return Vec3{f, f, f}, nil
	}
	return Vec3{}, fmt.Errorf("%w: line 2: scaling factor is zero", ErrBadPOSCAR)
}

// poscarLines walks the lines of a POSCAR.
type poscarLines struct {
	lines []string
	n     int // index of the next line
}

// next returns the fields of the next line, which must not be blank, and its
// number (1-based); what names the line in errors.
func (p *poscarLines) next(what string) ([]string, int, error) {
	if p.n >= len(p.lines) {
		return nil, 0, fmt.Errorf("%w: file ends before the %s (line %d)", ErrBadPOSCAR, what, p.n+1)
	}
	fields := strings.Fields(p.lines[p.n])
	p.n++
	if len(fields) == 0 {
		return nil, 0, fmt.Errorf("%w: line %d: blank where the %s should be", ErrBadPOSCAR, p.n, what)
	}
	return fields, p.n, nil
}

// numbers reads the first n fields of the next line as numbers; the rest of
// the line is a comment.
func (p *poscarLines) numbers(n int, what string) ([]float64, error) {
	fields, lineNo, err := p.next(what)
	if err != nil {
		return nil, err
	}
	if len(fields) < n {
		return nil, fmt.Errorf("%w: line %d: %s has %d fields, want %d numbers", ErrBadPOSCAR, lineNo, what, len(fields), n)
	}
	xs := make([]float64, n)
	for i := range xs {
		if xs[i], err = parseFortranFloat(fields[i]); err != nil {
			return nil, fmt.Errorf("%w: line %d: %s: %w", ErrBadPOSCAR, lineNo, what, err)
		}
	}
	return xs, nil
}

// scale reads line 2: one number, or three, then optionally a comment.
func (p *poscarLines) scale() ([]float64, error) {
	fields, lineNo, err := p.next("scaling factor")
	if err != nil {
		return nil, err
	}
	var xs []float64
	for _, f := range fields {
		x, err := parseFortranFloat(f)
		if err != nil {
			break
		}
		xs = append(xs, x)
	}
	if len(xs) != 1 && len(xs) != 3 {
		return nil, fmt.Errorf("%w: line %d: scaling %q: want one number or three", ErrBadPOSCAR, lineNo, strings.Join(fields, " "))
	}
	return xs, nil
}

// splitLines splits text into lines without their line ends (\n or \r\n),
// after a UTF-8 byte-order mark.
func splitLines(data []byte) []string {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// parseFortranFloat reads a finite decimal number as Fortran's list-directed
// input does: an optional sign, digits with an optional point, an optional
// exponent with E or D. Hexadecimal, NaN, Inf and underscores are rejected.
func parseFortranFloat(s string) (float64, error) {
	ok := s != ""
	for i := 0; i < len(s) && ok; i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == '+', c == '-', c == 'e', c == 'E':
		case c == 'd' || c == 'D':
			s = s[:i] + "e" + s[i+1:]
		default:
			ok = false
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if !ok || err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return x, nil
}

// isFortranLogical reports whether f reads as a Fortran logical: T or F,
// optionally after a point (.TRUE., .false.).
func isFortranLogical(f string) bool {
	f = strings.TrimPrefix(f, ".")
	return f != "" && strings.ContainsRune("TtFf", rune(f[0]))
}

// WritePOSCAR writes s as a VASP 5 POSCAR: the comment line (the formula
// when comment is empty; line breaks become spaces), scale 1, the lattice
// vectors, the species and count lines, "Direct" and one fractional
// position per site followed by its element, numbers with 16 decimals as
// pymatgen's Poscar writes them. Sites keep the order of s: consecutive
// sites of one element form a group, so an element may appear in several
// groups (Na Cl Na), which VASP accepts with a matching POTCAR. A lattice
// component below 1e-6 Å in size is written with an exponent, so that no
// vector rounds away; a cell that still cannot be written (one whose
// written vectors are coplanar) is an error wrapping ErrBadLattice.
// ParsePOSCAR reads the output back to within 5e-17 in each number.
func WritePOSCAR(w io.Writer, s *Structure, comment string) error {
	if err := checkWritable(s); err != nil {
		return fmt.Errorf("write POSCAR: %w", err)
	}
	if comment == "" {
		comment = s.Composition().Formula()
	}
	comment = strings.Join(strings.Fields(comment), " ")
	// Runs of one element: the species and counts lines.
	var symbols, counts []string
	for i := 0; i < len(s.Species); {
		j := i
		for j < len(s.Species) && s.Species[j] == s.Species[i] {
			j++
		}
		symbols = append(symbols, s.Species[i].Symbol())
		counts = append(counts, strconv.Itoa(j-i))
		i = j
	}

	rows, err := writtenLattice(s.Lattice, fixed16, 1e-6)
	if err != nil {
		return fmt.Errorf("write POSCAR: %w", err)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n1.0\n", comment)
	for _, row := range rows {
		fmt.Fprintf(bw, "%s %s %s\n", row[0], row[1], row[2])
	}
	fmt.Fprintf(bw, "%s\n%s\nDirect\n", strings.Join(symbols, " "), strings.Join(counts, " "))
	for i, f := range s.Frac {
		fmt.Fprintf(bw, "%s %s %s %s\n", fixed16(f[0]), fixed16(f[1]), fixed16(f[2]), s.Species[i].Symbol())
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write POSCAR: %w", err)
	}
	return nil
}

// fixed16 formats x with 16 decimals in a field of 21, without a sign on
// zero.
func fixed16(x float64) string {
	if x == 0 {
		x = 0 // drops the sign of −0
	}
	return fmt.Sprintf("%21.16f", x)
}

// writtenLattice formats the lattice vectors with fixed, except for
// components smaller than small in size, which take an exponent (16
// significant digits), and checks that the numbers as written still make a
// cell.
func writtenLattice(l Lattice, fixed func(float64) string, small float64) ([3][3]string, error) {
	var rows [3][3]string
	var back [3][3]float64
	for i, row := range l.Matrix() {
		for j, x := range row {
			if x != 0 && math.Abs(x) < small {
				rows[i][j] = fmt.Sprintf("%.15e", x)
			} else {
				rows[i][j] = fixed(x)
			}
			back[i][j], _ = parseFortranFloat(strings.TrimSpace(rows[i][j]))
		}
	}
	wl, err := NewLattice(back)
	if err == nil {
		err = requireFiniteVolume(wl)
	}
	if err != nil {
		return rows, fmt.Errorf("cell %v cannot be written: %w", l.Matrix(), err)
	}
	return rows, nil
}

// checkWritable rejects what no format can describe: a nil or empty
// structure, a lattice never set, mismatched lists, unknown elements,
// coordinates that are not finite.
func checkWritable(s *Structure) error {
	if s == nil || s.NumSites() == 0 || len(s.Frac) != len(s.Species) || s.Volume() == 0 {
		return fmt.Errorf("%w: empty or unset structure", ErrBadStructure)
	}
	for i, e := range s.Species {
		if !e.Valid() {
			return fmt.Errorf("%w: site %d: %w: atomic number %d", ErrBadStructure, i, ErrUnknownElement, int(e))
		}
		for _, x := range s.Frac[i] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: site %d coordinate is %v", ErrBadStructure, i, x)
			}
		}
	}
	return nil
}
