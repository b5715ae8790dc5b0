package crystal

import (
	"errors"
	"math"
	"testing"
)

// FuzzParseFormula feeds arbitrary strings to ParseFormula: it must never
// panic, must fail with ErrBadFormula or ErrUnknownElement, and a formula it
// accepts must have positive finite amounts and be written by Formula (and
// MarshalText) in a form that parses back to the same composition.
func FuzzParseFormula(f *testing.F) {
	for _, s := range []string{
		"Fe2O3", "Li0.5CoO2", "Ca3(PO4)2", "Sr(AlH)2", "K4[Fe(CN)6]", "Fe2 O3", "CH3COOH", "C1Pt1", "O2",
		"Na1e-3Cl", "Mg2.5E+1", "H2O2", "LiFePO4", "(NH4)2SO4", "Ba0.5Sr0.5TiO3",
		"", " ", "(", ")", "()", "Fe2O3)", "[Fe(CN)6", "Xx", "fe", "Fe-2", "Fe0", "Na1e", "Na.", "Na..5", "Na1e400",
		"((((((((((((((((((((((((((((((((((((((((Na))))))))))))))))))))))))))))))))))))))))", "Fe\u00b2O\u2083",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseFormula(s)
		if err != nil {
			if !errors.Is(err, ErrBadFormula) && !errors.Is(err, ErrUnknownElement) {
				t.Fatalf("ParseFormula(%q): error %v wraps neither ErrBadFormula nor ErrUnknownElement", s, err)
			}
			return
		}
		if c.IsEmpty() {
			t.Fatalf("ParseFormula(%q) accepted an empty composition", s)
		}
		for _, it := range c.Items() {
			if !(it.Amount > 0) || math.IsInf(it.Amount, 0) || !it.Element.Valid() {
				t.Fatalf("ParseFormula(%q): %s amount %v", s, it.Element, it.Amount)
			}
		}
		for _, written := range []string{c.Formula(), mustMarshalText(t, c)} {
			back, err := ParseFormula(written)
			if err != nil {
				t.Fatalf("ParseFormula(%q) = %q, which does not parse: %v", s, written, err)
			}
			if !sameAmounts(back, c) {
				t.Fatalf("ParseFormula(%q) = %v, written %q, read back as %v", s, c.Items(), written, back.Items())
			}
		}
	})
}

func mustMarshalText(t *testing.T, c Composition) string {
	t.Helper()
	b, err := c.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameAmounts compares compositions to the precision Formula writes (as
// pymatgen's formula_double_format): amounts within 1e-8 of an integer are
// written as that integer, others rounded to 8 decimals.
func sameAmounts(a, b Composition) bool {
	if a.Len() != b.Len() {
		return false
	}
	for _, it := range a.Items() {
		if math.Abs(b.Amount(it.Element)-it.Amount) > 1e-8+1e-15*math.Abs(it.Amount) {
			return false
		}
	}
	return true
}
