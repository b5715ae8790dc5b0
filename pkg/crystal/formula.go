package crystal

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// maxFormulaDepth bounds parenthesis nesting so hostile input cannot exhaust
// the stack.
const maxFormulaDepth = 32

// ParseFormula parses a chemical formula the way pymatgen's Composition
// does: element symbols with optional real amounts ("Fe2O3", "Li0.5CoO2",
// "C1Pt1"), groups in parentheses or brackets with a multiplier
// ("Ca3(PO4)2", "Sr(AlH)2"), and whitespace between tokens ("Fe2 O3").
// Amounts of an element given more than once are summed ("K12O16V4" is
// K12 O16 V4; "CH3COOH" is C2H4O2). An unknown symbol, a malformed or
// non-positive amount, unbalanced parentheses or an empty formula is an
// error wrapping ErrBadFormula or ErrUnknownElement that names the token.
func ParseFormula(formula string) (Composition, error) {
	p := formulaParser{src: formula}
	p.skipSpace()
	if p.pos == len(p.src) {
		return Composition{}, fmt.Errorf("%w: empty formula", ErrBadFormula)
	}
	items, err := p.sequence(0)
	if err != nil {
		return Composition{}, err
	}
	if p.pos != len(p.src) {
		return Composition{}, p.errorf("unexpected %q", p.rest())
	}
	if len(items) == 0 {
		return Composition{}, fmt.Errorf("%w: no elements in %q", ErrBadFormula, formula)
	}
	var c Composition
	for _, it := range items {
		c = c.add(it.Element, it.Amount)
	}
	// Multipliers of nested groups can push a total out of range.
	for _, it := range c.items {
		if err := checkAmount(it.Amount); err != nil {
			return Composition{}, fmt.Errorf("%w: %s in %q: %v", ErrBadFormula, it.Element, formula, err)
		}
	}
	return c, nil
}

type formulaParser struct {
	src string
	pos int
}

func (p *formulaParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at position %d of %q", ErrBadFormula, fmt.Sprintf(format, args...), p.pos, p.src)
}

func (p *formulaParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 12 {
		r = r[:12] + "…"
	}
	return r
}

func (p *formulaParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// sequence parses groups until the end or a closing bracket.
func (p *formulaParser) sequence(depth int) ([]ElementAmount, error) {
	if depth > maxFormulaDepth {
		return nil, p.errorf("parentheses nested deeper than %d", maxFormulaDepth)
	}
	var out []ElementAmount
	for {
		p.skipSpace()
		if p.pos == len(p.src) {
			return out, nil
		}
		ch := p.src[p.pos]
		switch {
		case ch == ')' || ch == ']':
			return out, nil
		case ch == '(' || ch == '[':
			open := p.pos
			closing := byte(')')
			if ch == '[' {
				closing = ']'
			}
			p.pos++
			inner, err := p.sequence(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.pos == len(p.src) || p.src[p.pos] != closing {
				p.pos = open
				return nil, p.errorf("unbalanced %q", string(ch))
			}
			if len(inner) == 0 {
				p.pos = open
				return nil, p.errorf("empty group")
			}
			p.pos++
			mult, err := p.amount()
			if err != nil {
				return nil, err
			}
			for _, it := range inner {
				out = append(out, ElementAmount{it.Element, it.Amount * mult})
			}
		case ch >= 'A' && ch <= 'Z':
			start := p.pos
			p.pos++
			for p.pos < len(p.src) && p.src[p.pos] >= 'a' && p.src[p.pos] <= 'z' {
				p.pos++
			}
			sym := p.src[start:p.pos]
			el, err := ElementBySymbol(sym)
			if err != nil {
				p.pos = start
				return nil, fmt.Errorf("%w: %q at position %d of %q", ErrUnknownElement, sym, start, p.src)
			}
			amt, err := p.amount()
			if err != nil {
				return nil, err
			}
			out = append(out, ElementAmount{el, amt})
		default:
			r := []rune(p.src[p.pos:])[0]
			if unicode.IsLower(r) {
				return nil, p.errorf("element symbol must start with a capital letter, found %q", p.rest())
			}
			return nil, p.errorf("unexpected %q", string(r))
		}
	}
}

// amount parses an optional positive number after an element or group; a
// missing amount is 1.
func (p *formulaParser) amount() (float64, error) {
	p.skipSpace()
	start := p.pos
	if p.pos < len(p.src) && (p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		p.pos++
	}
	digits := 0
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= '0' && c <= '9' {
			digits++
			p.pos++
			continue
		}
		if c == '.' {
			p.pos++
			continue
		}
		// An exponent only when followed by a digit or sign: "e" alone would
		// be part of nothing valid anyway (symbols start upper-case).
		if (c == 'e' || c == 'E') && digits > 0 && p.pos+1 < len(p.src) && strings.ContainsRune("0123456789+-", rune(p.src[p.pos+1])) {
			p.pos += 2
			continue
		}
		break
	}
	tok := p.src[start:p.pos]
	if tok == "" {
		return 1, nil
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil || digits == 0 {
		p.pos = start
		return 0, p.errorf("bad amount %q", tok)
	}
	if err := checkAmount(v); err != nil {
		p.pos = start
		return 0, p.errorf("amount %q: %v", tok, err)
	}
	return v, nil
}
