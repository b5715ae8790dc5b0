package crystal

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// cifSymOp is a space-group operation in fractional coordinates,
// x' = R·x + t, as written in _symmetry_equiv_pos_as_xyz ("-y, x-y, z+1/3").
type cifSymOp struct {
	rot   [3][3]float64
	trans Vec3
}

// apply returns R·x + t.
func (op cifSymOp) apply(x Vec3) Vec3 {
	var y Vec3
	for i := 0; i < 3; i++ {
		y[i] = op.rot[i][0]*x[0] + op.rot[i][1]*x[1] + op.rot[i][2]*x[2] + op.trans[i]
	}
	return y
}

// parseCIFSymOp reads an operation in the Jones-faithful notation of the
// International Tables (ITA §1.4.2.3) as CIFs write it: three comma-separated
// components, each a signed sum of terms that are a variable (x, y, z, any
// case), a number times a variable ("2x", "1/2*y") or a constant ("1/2",
// "0.5", "+1/3"), in any order ("-x+1/2", "1/2-x", "x-y"). Spaces are
// ignored. A crystallographic operation maps the lattice onto itself, so the
// rotation part must be an integer matrix with determinant ±1; anything else
// is rejected.
func parseCIFSymOp(s string) (cifSymOp, error) {
	var op cifSymOp
	compact := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, strings.ToLower(s))
	parts := strings.Split(compact, ",")
	if len(parts) != 3 {
		return op, fmt.Errorf("symmetry operation %s: want 3 comma-separated components, got %d", cifQuote(s), len(parts))
	}
	for i, p := range parts {
		if err := parseSymOpComponent(p, &op.rot[i], &op.trans[i]); err != nil {
			return op, fmt.Errorf("symmetry operation %s, component %d: %w", cifQuote(s), i+1, err)
		}
	}
	for i := range op.rot {
		for j := range op.rot[i] {
			if r := op.rot[i][j]; math.Abs(r-math.Round(r)) > 1e-6 {
				return op, fmt.Errorf("symmetry operation %s: coefficient %g is not an integer", cifQuote(s), r)
			}
		}
	}
	r := op.rot
	det := r[0][0]*(r[1][1]*r[2][2]-r[1][2]*r[2][1]) -
		r[0][1]*(r[1][0]*r[2][2]-r[1][2]*r[2][0]) +
		r[0][2]*(r[1][0]*r[2][1]-r[1][1]*r[2][0])
	if math.Abs(math.Abs(det)-1) > 1e-6 {
		return op, fmt.Errorf("symmetry operation %s: determinant %g is not ±1", cifQuote(s), det)
	}
	return op, nil
}

// parseSymOpComponent parses one component ("-x+1/2") into a row of the
// rotation and a translation.
func parseSymOpComponent(p string, row *[3]float64, trans *float64) error {
	if p == "" {
		return fmt.Errorf("empty")
	}
	pos := 0
	for pos < len(p) {
		sign := 1.0
		switch p[pos] {
		case '+':
			pos++
		case '-':
			sign = -1
			pos++
		default:
			if pos > 0 {
				return fmt.Errorf("%q: terms must be separated by + or -", p)
			}
		}
		coef, n, err := parseSymOpNumber(p[pos:])
		if err != nil {
			return fmt.Errorf("%q: %w", p, err)
		}
		pos += n
		if n > 0 && pos < len(p) && p[pos] == '*' {
			pos++
			if pos == len(p) || p[pos] < 'x' || p[pos] > 'z' {
				return fmt.Errorf("%q: '*' must be followed by x, y or z", p)
			}
		}
		if pos < len(p) && p[pos] >= 'x' && p[pos] <= 'z' {
			if n == 0 {
				coef = 1
			}
			row[p[pos]-'x'] += sign * coef
			pos++
			continue
		}
		if n == 0 {
			if pos == len(p) {
				return fmt.Errorf("%q: ends with a sign", p)
			}
			return fmt.Errorf("%q: unexpected %q", p, p[pos:pos+1])
		}
		*trans += sign * coef
	}
	return nil
}

// parseSymOpNumber reads an unsigned decimal or fraction ("1/2", "0.5",
// ".25", "1/3.0") at the start of s and returns it with the number of bytes
// read; n is 0 when s does not start with a number.
func parseSymOpNumber(s string) (v float64, n int, err error) {
	num, n := scanUnsignedDecimal(s)
	if n == 0 {
		return 0, 0, nil
	}
	v, err = strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("bad number %q", num)
	}
	if n < len(s) && s[n] == '/' {
		den, m := scanUnsignedDecimal(s[n+1:])
		if m == 0 {
			return 0, 0, fmt.Errorf("'/' must be followed by a number")
		}
		d, err := strconv.ParseFloat(den, 64)
		if err != nil || d == 0 {
			return 0, 0, fmt.Errorf("bad denominator %q", den)
		}
		v /= d
		n += 1 + m
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, 0, fmt.Errorf("number %q is not finite", s[:n])
	}
	return v, n, nil
}

// scanUnsignedDecimal returns the longest prefix of s of the form
// digits[.digits] or .digits.
func scanUnsignedDecimal(s string) (string, int) {
	i, digits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return "", 0
	}
	return s[:i], i
}
