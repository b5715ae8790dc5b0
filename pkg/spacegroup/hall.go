package spacegroup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadHall is returned for a Hall symbol that cannot be read.
var ErrBadHall = errors.New("bad Hall symbol")

// maxGroupOrder bounds a generated group: 192 is the order of the F-centred
// cubic groups in their conventional cells, the largest of the 530 settings.
const maxGroupOrder = 192

// centrings are the lattice translations of Hall's lattice symbols
// (ITB Table A1.4.2.2), in units of 1/Den.
var centrings = map[byte][][3]int{
	'P': nil,
	'A': {{0, 12, 12}},
	'B': {{12, 0, 12}},
	'C': {{12, 12, 0}},
	'I': {{12, 12, 12}},
	'R': {{16, 8, 8}, {8, 16, 16}},
	'S': {{8, 8, 16}, {16, 16, 8}},
	'T': {{8, 16, 8}, {16, 8, 16}},
	'F': {{0, 12, 12}, {12, 0, 12}, {12, 12, 0}},
}

// hallRot are the rotation matrices of Hall's matrix symbols
// (ITB Table A1.4.2.4), keyed by order and axis symbol. The primed axes (',
// ") are the two-fold axes along the face diagonals perpendicular to the
// preceding axis, keyed here by that axis; '*' is the three-fold axis along
// a+b+c.
var hallRot = map[[2]byte][3][3]int{
	{'1', 'z'}: {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	{'2', 'x'}: {{1, 0, 0}, {0, -1, 0}, {0, 0, -1}},
	{'2', 'y'}: {{-1, 0, 0}, {0, 1, 0}, {0, 0, -1}},
	{'2', 'z'}: {{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}},
	{'3', 'x'}: {{1, 0, 0}, {0, 0, -1}, {0, 1, -1}},
	{'3', 'y'}: {{-1, 0, 1}, {0, 1, 0}, {-1, 0, 0}},
	{'3', 'z'}: {{0, -1, 0}, {1, -1, 0}, {0, 0, 1}},
	{'4', 'x'}: {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}},
	{'4', 'y'}: {{0, 0, 1}, {0, 1, 0}, {-1, 0, 0}},
	{'4', 'z'}: {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
	{'6', 'x'}: {{1, 0, 0}, {0, 1, -1}, {0, 1, 0}},
	{'6', 'y'}: {{0, 0, 1}, {0, 1, 0}, {-1, 0, 1}},
	{'6', 'z'}: {{1, -1, 0}, {1, 0, 0}, {0, 0, 1}},
	{'3', '*'}: {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}},
}

// hallPrimed are the two-fold rotations about the face diagonals: key
// (preceding axis, ' or ").
var hallPrimed = map[[2]byte][3][3]int{
	{'x', '\''}: {{-1, 0, 0}, {0, 0, -1}, {0, -1, 0}},
	{'x', '"'}:  {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
	{'y', '\''}: {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0}},
	{'y', '"'}:  {{0, 0, 1}, {0, -1, 0}, {1, 0, 0}},
	{'z', '\''}: {{0, -1, 0}, {-1, 0, 0}, {0, 0, -1}},
	{'z', '"'}:  {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}},
}

// hallTrans are the translation symbols (ITB Table A1.4.2.3), in 1/Den.
var hallTrans = map[byte][3]int{
	'a': {12, 0, 0}, 'b': {0, 12, 0}, 'c': {0, 0, 12}, 'n': {12, 12, 12},
	'u': {6, 0, 0}, 'v': {0, 6, 0}, 'w': {0, 0, 6}, 'd': {6, 6, 6},
}

// Hall is a parsed Hall symbol: its generators and the group they generate.
type Hall struct {
	// Symbol is the symbol as given, with runs of spaces collapsed.
	Symbol string
	// Lattice is the lattice letter (P, A, B, C, I, R, S, T, F).
	Lattice byte
	// Centric reports a leading "-": the group contains the inversion at
	// the origin.
	Centric bool
	// Centring lists the centring translations (not the zero one), in
	// 1/Den.
	Centring [][3]int
	// Generators are the operations the matrix symbols denote, after the
	// origin shift.
	Generators []Op
	// Ops is the whole group in the conventional cell: every operation
	// combined with every centring translation, the identity first.
	Ops []Op
}

// ParseHall reads a Hall symbol (S. R. Hall, Acta Cryst. A37, 517 (1981);
// the explicit-origin notation of ITB §1.4, Appendix A1.4.2) and generates
// its group. The grammar is
//
//	[-]L  N^A_T  [N^A_T  [N^A_T  [N^A_T]]]  [(vx vy vz)]
//
// with L the lattice symbol, each matrix symbol an order N ∈ {1,2,3,4,6}
// (preceded by "-" for the rotoinversion), an optional screw subscript digit
// (k/N of the axis), an optional axis x, y, z, ', " or * and translation
// letters a b c n u v w d; and an origin shift V in twelfths. Omitted axes
// follow Hall's defaults: the first symbol is along c, the second a
// two-fold along a after a 2 or 4 and along a−b after a 3 or 6, the third
// a three-fold along a+b+c. The shift turns each generator (W, w) into
// (W, w + (I−W)V). spglib writes '"' as '='; both are read.
func ParseHall(symbol string) (*Hall, error) {
	return parseHall(symbol, false)
}

// parseHallGenerators reads a Hall symbol's generators without generating
// the group.
func parseHallGenerators(symbol string) ([]Op, error) {
	h, err := parseHall(symbol, true)
	if err != nil {
		return nil, err
	}
	return h.Generators, nil
}

func parseHall(symbol string, generatorsOnly bool) (*Hall, error) {
	fields := strings.Fields(symbol)
	h := &Hall{Symbol: strings.Join(fields, " ")}
	fail := func(format string, args ...any) (*Hall, error) {
		return nil, fmt.Errorf("%w %q: %s", ErrBadHall, h.Symbol, fmt.Sprintf(format, args...))
	}
	if len(fields) == 0 {
		return fail("empty")
	}
	// Origin shift: the last three fields "(vx" "vy" "vz)".
	var shift [3]int
	if i := strings.IndexByte(h.Symbol, '('); i >= 0 {
		inner := h.Symbol[i:]
		if !strings.HasSuffix(inner, ")") {
			return fail("origin shift %q is not closed", inner)
		}
		vs := strings.Fields(inner[1 : len(inner)-1])
		if len(vs) != 3 {
			return fail("origin shift %q needs three numbers", inner)
		}
		for k, v := range vs {
			n, err := strconv.Atoi(v)
			if err != nil || n < -24 || n > 24 {
				return fail("origin shift component %q is not a small integer", v)
			}
			shift[k] = n * Den / 12
		}
		fields = strings.Fields(h.Symbol[:i])
		if len(fields) == 0 {
			return fail("no lattice symbol")
		}
	}
	lat := fields[0]
	if strings.HasPrefix(lat, "-") {
		h.Centric = true
		lat = lat[1:]
	}
	if len(lat) != 1 {
		return fail("lattice symbol %q is not one letter", fields[0])
	}
	h.Lattice = lat[0]
	if h.Lattice >= 'a' && h.Lattice <= 'z' {
		h.Lattice -= 'a' - 'A'
	}
	cen, ok := centrings[h.Lattice]
	if !ok {
		return fail("unknown lattice symbol %q", lat)
	}
	h.Centring = cen
	mats := fields[1:]
	if len(mats) == 0 || len(mats) > 4 {
		return fail("want 1 to 4 matrix symbols, got %d", len(mats))
	}
	var gens []Op
	if h.Centric {
		inv := Op{Rot: [3][3]int{{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}}}
		gens = append(gens, inv)
	}
	prevN, prevAxis := byte(0), byte(0)
	for i, m := range mats {
		op, n, axis, err := parseHallMatrix(m, i, prevN, prevAxis)
		if err != nil {
			return fail("matrix symbol %d %q: %v", i+1, m, err)
		}
		gens = append(gens, op)
		prevN, prevAxis = n, axis
	}
	// Origin shift: (W, w) → (W, w + (I−W)V).
	for k := range gens {
		g := &gens[k]
		for r := 0; r < 3; r++ {
			t := g.Trans[r] + shift[r]
			for c := 0; c < 3; c++ {
				t -= g.Rot[r][c] * shift[c]
			}
			g.Trans[r] = mod(t, Den)
		}
	}
	h.Generators = gens
	if generatorsOnly {
		return h, nil
	}
	all := append([]Op(nil), gens...)
	for _, c := range cen {
		all = append(all, Op{Rot: Identity.Rot, Trans: c})
	}
	ops, err := closeGroup(all, maxGroupOrder)
	if err != nil {
		return fail("%v", err)
	}
	h.Ops = ops
	return h, nil
}

// parseHallMatrix reads one matrix symbol; i is its position (0-based),
// prevN and prevAxis the order and axis of the preceding symbol.
func parseHallMatrix(m string, i int, prevN, prevAxis byte) (Op, byte, byte, error) {
	var op Op
	s := strings.ReplaceAll(m, "=", `"`)
	improper := false
	if strings.HasPrefix(s, "-") {
		improper = true
		s = s[1:]
	}
	if s == "" || !strings.ContainsRune("12346", rune(s[0])) {
		return op, 0, 0, errors.New("does not start with a rotation order 1, 2, 3, 4 or 6")
	}
	n := s[0]
	s = s[1:]
	screw := 0
	if s != "" && s[0] >= '1' && s[0] <= '5' {
		screw = int(s[0] - '0')
		if screw >= int(n-'0') {
			return op, 0, 0, fmt.Errorf("screw subscript %d is not below the order %c", screw, n)
		}
		s = s[1:]
	}
	axis := byte(0)
	if s != "" && strings.ContainsRune(`xyz'"*`, rune(s[0])) {
		axis = s[0]
		s = s[1:]
	}
	if axis == 0 {
		switch {
		case n == '1':
			axis = 'z'
		case i == 0:
			axis = 'z'
		case i == 1 && n == '2' && (prevN == '2' || prevN == '4'):
			axis = 'x'
		case i == 1 && n == '2' && (prevN == '3' || prevN == '6'):
			axis = '\''
		case i == 2 && n == '3':
			axis = '*'
		default:
			return op, 0, 0, errors.New("has no axis and Hall's rules give it none")
		}
	}
	var rot [3][3]int
	var ok bool
	switch axis {
	case '\'', '"':
		if n != '2' {
			return op, 0, 0, fmt.Errorf("a face-diagonal axis (%c) needs order 2", axis)
		}
		if prevAxis == 0 {
			return op, 0, 0, errors.New("a face-diagonal axis needs a preceding axis")
		}
		rot, ok = hallPrimed[[2]byte{prevAxis, axis}]
	case '*':
		if n != '3' {
			return op, 0, 0, errors.New("the body-diagonal axis (*) needs order 3")
		}
		rot, ok = hallRot[[2]byte{'3', '*'}]
	default:
		if n == '1' {
			rot, ok = hallRot[[2]byte{'1', 'z'}]
		} else {
			rot, ok = hallRot[[2]byte{n, axis}]
		}
	}
	if !ok {
		return op, 0, 0, fmt.Errorf("no %c-fold rotation about %c", n, axis)
	}
	if improper {
		for r := range rot {
			for c := range rot[r] {
				rot[r][c] = -rot[r][c]
			}
		}
	}
	op.Rot = rot
	if screw > 0 {
		k := strings.IndexByte("xyz", axis)
		if k < 0 {
			return op, 0, 0, fmt.Errorf("a screw needs an axis x, y or z, not %c", axis)
		}
		op.Trans[k] += screw * Den / int(n-'0')
	}
	for _, c := range []byte(s) {
		t, ok := hallTrans[c]
		if !ok {
			return op, 0, 0, fmt.Errorf("unknown translation symbol %q", c)
		}
		for k := range t {
			op.Trans[k] += t[k]
		}
	}
	for k := range op.Trans {
		op.Trans[k] = mod(op.Trans[k], Den)
	}
	// The preceding axis for a later primed symbol: this one's when it is
	// x, y or z; c for the body diagonal (the two-folds of "P 3* 2" lie
	// along a−b); unchanged after a primed symbol.
	switch axis {
	case '*':
		axis = 'z'
	case '\'', '"':
		axis = prevAxis
	}
	return op, n, axis, nil
}
