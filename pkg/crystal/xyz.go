package crystal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var (
	// ErrBadXYZ is returned for text that is not an (extended) XYZ file: a
	// missing or malformed count line, a comment line whose key=value pairs
	// do not parse, a Properties spec without species or positions, an atom
	// line with the wrong number or kind of fields. The message names the
	// line.
	ErrBadXYZ = errors.New("bad XYZ")
	// ErrNotPeriodic is returned for a structure with no cell or not
	// periodic along all three axes: a plain XYZ file (a molecule), an
	// extended XYZ frame without Lattice, or one with pbc="T T F". A
	// Structure is a three-dimensional crystal; Crucible does not invent a
	// vacuum box around a molecule.
	ErrNotPeriodic = errors.New("not periodic in three dimensions")
)

// xyzProperty is one entry of an extended XYZ Properties spec: a name, a
// type (S string, R real, I integer, L logical) and a column count.
type xyzProperty struct {
	name  string
	kind  byte
	ncols int
}

// maxXYZColumns bounds the columns an atom line may have.
const maxXYZColumns = 1 << 12

// ParseXYZ reads the one frame of an extended XYZ file (the format of ASE
// and QUIP, github.com/libAtoms/extxyz):
//
//	8
//	Lattice="5.43 0 0 0 5.43 0 0 0 5.43" Properties=species:S:1:pos:R:3 pbc="T T T"
//	Si 0.0 0.0 0.0
//	…
//
// The first line is the number of atoms; the second holds key=value pairs
// (values bare, "double quoted" with backslash escapes, or in {} or []);
// then one line per atom. Lattice gives the vectors a, b, c (nine numbers,
// Å). Properties lists the columns as name:type:count triples (types S, R,
// I, L); it defaults to species:S:1:pos:R:3, and must include pos:R:3
// (Cartesian, Å) and species:S:1 (element symbols) or Z:I:1 (atomic
// numbers). Other columns are checked against their type and not kept, as
// are other keys (energy, stress, config_type, …). The keys Lattice,
// Properties and pbc match in any case.
//
// A structure is periodic: a frame without Lattice (a plain XYZ file, a
// molecule) or with pbc other than "T T T" is ErrNotPeriodic. pbc defaults
// to periodic when Lattice is given, as in ASE. A file with more than one
// frame is ErrBadXYZ (use ParseXYZFrames). Other errors wrap ErrBadXYZ
// (naming the line), ErrBadLattice, ErrUnknownElement, ErrBadStructure or
// ErrTooManySites. Sites keep the order of the file.
func ParseXYZ(data []byte) (*Structure, error) {
	p := xyzReader{lines: splitLines(data)}
	s, err := p.frame()
	if err != nil {
		return nil, err
	}
	if p.more() {
		return nil, fmt.Errorf("%w: line %d: a second frame; a structure file holds one (read every frame with ParseXYZFrames)", ErrBadXYZ, p.n+1)
	}
	return s, nil
}

// ParseXYZFrames reads every frame of an extended XYZ file, as ParseXYZ
// reads one; blank lines may follow the last frame.
func ParseXYZFrames(data []byte) ([]*Structure, error) {
	p := xyzReader{lines: splitLines(data)}
	var out []*Structure
	for {
		s, err := p.frame()
		if err != nil {
			return nil, fmt.Errorf("frame %d: %w", len(out)+1, err)
		}
		out = append(out, s)
		if !p.more() {
			return out, nil
		}
	}
}

// xyzReader walks the lines of an XYZ file.
type xyzReader struct {
	lines []string
	n     int // index of the next line
}

// more reports whether a non-blank line follows.
func (p *xyzReader) more() bool {
	for _, l := range p.lines[p.n:] {
		if strings.TrimSpace(l) != "" {
			return true
		}
	}
	return false
}

// frame reads one frame starting at the current line.
func (p *xyzReader) frame() (*Structure, error) {
	if p.n >= len(p.lines) || strings.TrimSpace(p.lines[p.n]) == "" {
		return nil, fmt.Errorf("%w: line %d: want the number of atoms", ErrBadXYZ, p.n+1)
	}
	countLine := p.n + 1
	fields := strings.Fields(p.lines[p.n])
	n, err := strconv.Atoi(fields[0])
	if err != nil || len(fields) != 1 {
		return nil, fmt.Errorf("%w: line %d: %q is not a number of atoms", ErrBadXYZ, countLine, p.lines[p.n])
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("%w: line %d: %d atoms", ErrBadStructure, countLine, n)
	case n > MaxReadSites:
		return nil, fmt.Errorf("%w: line %d: %d atoms, more than %d", ErrTooManySites, countLine, n, MaxReadSites)
	}
	if p.n+1 >= len(p.lines) {
		return nil, fmt.Errorf("%w: line %d: file ends before the comment line", ErrBadXYZ, countLine+1)
	}
	commentLine := countLine + 1
	lat, props, bySymbol, err := parseXYZHeader(p.lines[p.n+1], commentLine)
	if err != nil {
		return nil, err
	}
	p.n += 2

	ncols := 0
	for _, pr := range props {
		ncols += pr.ncols
	}
	species := make([]Element, n)
	frac := make([]Vec3, n)
	for i := range n {
		if p.n >= len(p.lines) {
			return nil, fmt.Errorf("%w: line %d: file ends after %d of %d atoms", ErrBadXYZ, p.n+1, i, n)
		}
		lineNo := p.n + 1
		fields := strings.Fields(p.lines[p.n])
		p.n++
		if len(fields) != ncols {
			return nil, fmt.Errorf("%w: line %d: %d fields, want %d (Properties)", ErrBadXYZ, lineNo, len(fields), ncols)
		}
		col := 0
		for _, pr := range props {
			vals := fields[col : col+pr.ncols]
			col += pr.ncols
			if err := checkXYZValues(pr, vals); err != nil {
				return nil, fmt.Errorf("%w: line %d: %s: %w", ErrBadXYZ, lineNo, pr.name, err)
			}
			switch pr.name {
			case "species":
				if species[i], err = ElementBySymbol(vals[0]); err != nil {
					return nil, fmt.Errorf("line %d: %w", lineNo, err)
				}
			case "Z":
				if bySymbol {
					break // the species column decides
				}
				z, _ := strconv.Atoi(vals[0])
				if species[i], err = ElementByZ(z); err != nil {
					return nil, fmt.Errorf("line %d: %w", lineNo, err)
				}
			case "pos":
				var c Vec3
				for k := range c {
					c[k], _ = parseFortranFloat(vals[k])
				}
				frac[i] = lat.Fractional(c)
			}
		}
	}
	s, err := NewStructure(lat, species, frac)
	if err != nil {
		return nil, err
	}
	if err := requireFinitePositions(s, "atoms"); err != nil {
		return nil, err
	}
	return s, nil
}

// checkXYZValues checks the fields of one property against its type.
func checkXYZValues(pr xyzProperty, vals []string) error {
	for _, v := range vals {
		var err error
		switch pr.kind {
		case 'R':
			_, err = parseFortranFloat(v)
		case 'I':
			_, err = strconv.Atoi(v)
		case 'L':
			if _, ok := parseXYZBool(v); !ok {
				err = fmt.Errorf("%q is not T or F", v)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseXYZHeader reads the comment line: the lattice, the columns and
// whether the species column (rather than Z) names the elements. A line
// that is no list of key=value pairs, or one without Lattice, is a plain
// XYZ comment (ErrNotPeriodic) unless it mentions a lattice.
func parseXYZHeader(line string, lineNo int) (lat Lattice, props []xyzProperty, bySymbol bool, err error) {
	kvs, kvErr := parseKeyValues(line)
	if kvErr != nil {
		if strings.Contains(strings.ToLower(line), "lattice") {
			return Lattice{}, nil, false, fmt.Errorf("%w: line %d: %w", ErrBadXYZ, lineNo, kvErr)
		}
		kvs = nil
	}
	var latText, propText, pbcText *string
	for i := range kvs {
		var dst **string
		switch strings.ToLower(kvs[i].key) {
		case "lattice":
			dst = &latText
		case "properties":
			dst = &propText
		case "pbc":
			dst = &pbcText
		default:
			continue
		}
		if *dst != nil {
			return Lattice{}, nil, false, fmt.Errorf("%w: line %d: key %s given twice", ErrBadXYZ, lineNo, kvs[i].key)
		}
		*dst = &kvs[i].value
	}
	if latText == nil {
		return Lattice{}, nil, false, fmt.Errorf("%w: line %d: no Lattice=\"…\" on the comment line: a plain XYZ file is a molecule, not a crystal; give the cell as extended XYZ", ErrNotPeriodic, lineNo)
	}
	xs := strings.Fields(unbracket(*latText))
	if len(xs) != 9 {
		return Lattice{}, nil, false, fmt.Errorf("%w: line %d: Lattice has %d values, want 9", ErrBadXYZ, lineNo, len(xs))
	}
	var m [3][3]float64
	for i, x := range xs {
		v, err := parseFortranFloat(x)
		if err != nil {
			return Lattice{}, nil, false, fmt.Errorf("%w: line %d: Lattice: %w", ErrBadXYZ, lineNo, err)
		}
		m[i/3][i%3] = v
	}
	lat, err = NewLattice(m)
	if err == nil {
		err = requireFiniteVolume(lat)
	}
	if err != nil {
		return Lattice{}, nil, false, fmt.Errorf("line %d: Lattice: %w", lineNo, err)
	}
	if pbcText != nil {
		flags := strings.Fields(unbracket(*pbcText))
		if len(flags) != 3 {
			return Lattice{}, nil, false, fmt.Errorf("%w: line %d: pbc %q: want three of T and F", ErrBadXYZ, lineNo, *pbcText)
		}
		for _, f := range flags {
			b, ok := parseXYZBool(f)
			if !ok {
				return Lattice{}, nil, false, fmt.Errorf("%w: line %d: pbc %q: want three of T and F", ErrBadXYZ, lineNo, *pbcText)
			}
			if !b {
				return Lattice{}, nil, false, fmt.Errorf("%w: line %d: pbc=%q; a crystal is periodic along a, b and c", ErrNotPeriodic, lineNo, *pbcText)
			}
		}
	}
	spec := "species:S:1:pos:R:3"
	if propText != nil {
		spec = *propText
	}
	if props, bySymbol, err = parseXYZProperties(spec); err != nil {
		return Lattice{}, nil, false, fmt.Errorf("%w: line %d: Properties: %w", ErrBadXYZ, lineNo, err)
	}
	return lat, props, bySymbol, nil
}

// parseXYZProperties reads a Properties spec and checks that it has the
// positions and the species; bySymbol reports a species column (which
// decides over Z when both are given).
func parseXYZProperties(spec string) (props []xyzProperty, bySymbol bool, err error) {
	parts := strings.Split(spec, ":")
	if len(parts)%3 != 0 {
		return nil, false, fmt.Errorf("%q is not name:type:count triples", spec)
	}
	seen := map[string]bool{}
	total := 0
	for i := 0; i < len(parts); i += 3 {
		name, kind, count := parts[i], parts[i+1], parts[i+2]
		n, err := strconv.Atoi(count)
		if name == "" || err != nil || n < 1 || n > maxXYZColumns {
			return nil, false, fmt.Errorf("%q: want name:type:count with a positive count", strings.Join(parts[i:i+3], ":"))
		}
		if len(kind) != 1 || !strings.Contains("SRIL", kind) {
			return nil, false, fmt.Errorf("%s: type %q is not S, R, I or L", name, kind)
		}
		if seen[name] {
			return nil, false, fmt.Errorf("%s listed twice", name)
		}
		seen[name] = true
		if total += n; total > maxXYZColumns {
			return nil, false, fmt.Errorf("more than %d columns", maxXYZColumns)
		}
		pr := xyzProperty{name: name, kind: kind[0], ncols: n}
		switch {
		case name == "pos" && (pr.kind != 'R' || n != 3):
			return nil, false, fmt.Errorf("pos is %s:%d, want R:3", kind, n)
		case name == "species" && (pr.kind != 'S' || n != 1):
			return nil, false, fmt.Errorf("species is %s:%d, want S:1", kind, n)
		case name == "Z" && (pr.kind != 'I' || n != 1):
			return nil, false, fmt.Errorf("Z is %s:%d, want I:1", kind, n)
		}
		props = append(props, pr)
	}
	if !seen["pos"] {
		return nil, false, errors.New("no pos:R:3 column")
	}
	if !seen["species"] && !seen["Z"] {
		return nil, false, errors.New("no species:S:1 or Z:I:1 column")
	}
	return props, seen["species"], nil
}

// parseXYZBool reads a logical: T, F, True, False in any case.
func parseXYZBool(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "t", "true":
		return true, true
	case "f", "false":
		return false, true
	}
	return false, false
}

// unbracket turns a value written as an array ([1, 2, 3] or {1 2 3}) into
// space-separated items.
func unbracket(v string) string {
	return strings.NewReplacer("[", " ", "]", " ", "{", " ", "}", " ", ",", " ").Replace(v)
}

// keyValue is one pair of an extended XYZ comment line; a key given without
// a value has value "" (true, by the convention).
type keyValue struct{ key, value string }

// parseKeyValues splits an extended XYZ comment line into key=value pairs.
// Keys and values are bare words, "double quoted" strings (with \" \\ and
// \n escapes) or, for values, {…} and […] arrays; spaces may surround =.
func parseKeyValues(line string) ([]keyValue, error) {
	var out []keyValue
	i := 0
	skip := func() {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i >= len(line) {
			return out, nil
		}
		key, j, err := scanXYZWord(line, i, true)
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, fmt.Errorf("empty key at column %d", i+1)
		}
		i = j
		skip()
		value := ""
		if i < len(line) && line[i] == '=' {
			i++
			skip()
			if i >= len(line) {
				return nil, fmt.Errorf("key %s has no value", key)
			}
			if value, i, err = scanXYZWord(line, i, false); err != nil {
				return nil, err
			}
		}
		out = append(out, keyValue{key, value})
	}
}

// scanXYZWord reads a word starting at i: quoted, bracketed (values only)
// or bare (up to a space, or an = for keys). It returns the word and the
// index after it.
func scanXYZWord(line string, i int, isKey bool) (string, int, error) {
	switch c := line[i]; {
	case c == '"':
		var b strings.Builder
		for j := i + 1; j < len(line); j++ {
			switch line[j] {
			case '\\':
				if j+1 == len(line) {
					return "", 0, fmt.Errorf("quoted string at column %d ends in a backslash", i+1)
				}
				j++
				if line[j] == 'n' {
					b.WriteByte('\n')
				} else {
					b.WriteByte(line[j])
				}
			case '"':
				return b.String(), j + 1, nil
			default:
				b.WriteByte(line[j])
			}
		}
		return "", 0, fmt.Errorf("quote opened at column %d is not closed", i+1)
	case !isKey && (c == '{' || c == '['):
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		depth := 0
		for j := i; j < len(line); j++ {
			switch line[j] {
			case c:
				depth++
			case closer:
				if depth--; depth == 0 {
					return line[i+1 : j], j + 1, nil
				}
			}
		}
		return "", 0, fmt.Errorf("%c opened at column %d is not closed", c, i+1)
	}
	j := i
	for j < len(line) && line[j] != ' ' && line[j] != '\t' && !(isKey && line[j] == '=') {
		if line[j] == '"' {
			return "", 0, fmt.Errorf("quote inside a bare word at column %d", j+1)
		}
		j++
	}
	return line[i:j], j, nil
}

// WriteXYZ writes s as one frame of extended XYZ: the number of atoms; a
// comment line with Lattice (rows a, b, c), Properties=species:S:1:pos:R:3,
// pbc="T T T" and, when title is not empty, title="…"; then each site's
// element and Cartesian position (Å), numbers with 16 decimals, so that
// the structure's predictions can be reproduced from the file (lattice
// components below 1e-6 Å in size with an exponent, so that no vector
// rounds away; a cell whose written vectors are coplanar is an error
// wrapping ErrBadLattice). Sites keep the order of s. Frames written one
// after another make a trajectory that ParseXYZFrames and ASE read.
func WriteXYZ(w io.Writer, s *Structure, title string) error {
	if err := checkWritable(s); err != nil {
		return fmt.Errorf("write XYZ: %w", err)
	}
	rows, err := writtenLattice(s.Lattice, xyzFixed, 1e-6)
	if err != nil {
		return fmt.Errorf("write XYZ: %w", err)
	}
	lat := make([]string, 0, 9)
	for _, row := range rows {
		lat = append(lat, row[:]...)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d\nLattice=\"%s\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"", s.NumSites(), strings.Join(lat, " "))
	if title != "" {
		fmt.Fprintf(bw, " title=%s", quoteXYZ(title))
	}
	bw.WriteString("\n")
	for i, e := range s.Species {
		c := s.Cartesian(i)
		fmt.Fprintf(bw, "%-2s %22s %22s %22s\n", e.Symbol(), xyzFixed(c[0]), xyzFixed(c[1]), xyzFixed(c[2]))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write XYZ: %w", err)
	}
	return nil
}

// xyzFixed formats x with 16 decimals, without a sign on zero.
func xyzFixed(x float64) string {
	s := strconv.FormatFloat(x, 'f', 16, 64)
	if strings.Trim(s, "-0.") == "" {
		return s[strings.IndexByte(s, '0'):]
	}
	return s
}

// quoteXYZ quotes a value for a comment line: one line, backslashes and
// double quotes escaped.
func quoteXYZ(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	v = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v)
	return `"` + v + `"`
}
