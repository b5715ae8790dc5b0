package crystal

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sentinel errors, so callers can record an expected failure as data.
var (
	ErrUnknownElement = errors.New("unknown element")
	ErrBadFormula     = errors.New("bad formula")
)

// amountTolerance is the amount below which an element is absent, and the
// tolerance for calling an amount an integer (pymatgen's
// Composition.amount_tolerance).
const amountTolerance = 1e-8

// maxAmount bounds an element's amount: far above any real formula or cell,
// and far below where integer arithmetic on amounts would overflow.
const maxAmount = 1e9

// ElementAmount is one element of a composition with its amount (atoms per
// formula unit, or per cell).
type ElementAmount struct {
	Element Element
	Amount  float64
}

// Composition is an immutable multiset of elements with real amounts. It
// remembers the order in which elements were first given (pymatgen does, and
// its non-integer formulas depend on it); equality ignores that order.
type Composition struct {
	items []ElementAmount
}

// NewComposition builds a composition from element amounts. Amounts must be
// finite and positive; an element given twice is summed.
func NewComposition(items ...ElementAmount) (Composition, error) {
	var c Composition
	for _, it := range items {
		if !it.Element.Valid() {
			return Composition{}, fmt.Errorf("%w: atomic number %d", ErrUnknownElement, int(it.Element))
		}
		if err := checkAmount(it.Amount); err != nil {
			return Composition{}, fmt.Errorf("%w: %s: %v", ErrBadFormula, it.Element, err)
		}
		c = c.add(it.Element, it.Amount)
	}
	return c, nil
}

// CompositionFromMap builds a composition from symbol → amount; elements are
// ordered by atomic number.
func CompositionFromMap(m map[string]float64) (Composition, error) {
	items := make([]ElementAmount, 0, len(m))
	for sym, amt := range m {
		e, err := ElementBySymbol(sym)
		if err != nil {
			return Composition{}, err
		}
		items = append(items, ElementAmount{e, amt})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Element < items[j].Element })
	return NewComposition(items...)
}

// MustParseFormula parses a formula and panics on error; for constants in
// code and tests.
func MustParseFormula(formula string) Composition {
	c, err := ParseFormula(formula)
	if err != nil {
		panic(err)
	}
	return c
}

// checkAmount accepts amounts in [1e-8, 1e9].
func checkAmount(x float64) error {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || x <= 0:
		return fmt.Errorf("amount %v must be positive", x)
	case x < amountTolerance:
		return fmt.Errorf("amount %v below %g", x, amountTolerance)
	case x > maxAmount:
		return fmt.Errorf("amount %v above %g", x, maxAmount)
	}
	return nil
}

func (c Composition) add(e Element, amt float64) Composition {
	for i := range c.items {
		if c.items[i].Element == e {
			items := append([]ElementAmount(nil), c.items...)
			items[i].Amount += amt
			return Composition{items}
		}
	}
	return Composition{append(append([]ElementAmount(nil), c.items...), ElementAmount{e, amt})}
}

// Items returns the elements and amounts in the order first given.
func (c Composition) Items() []ElementAmount { return append([]ElementAmount(nil), c.items...) }

// WithinElements reports whether every element of c is one for which in
// returns true (vacuously for an empty composition), without allocating.
func (c Composition) WithinElements(in func(Element) bool) bool {
	for _, it := range c.items {
		if !in(it.Element) {
			return false
		}
	}
	return true
}

// Len is the number of distinct elements.
func (c Composition) Len() int { return len(c.items) }

// IsEmpty reports whether the composition has no elements.
func (c Composition) IsEmpty() bool { return len(c.items) == 0 }

// Elements returns the distinct elements ordered by atomic number.
func (c Composition) Elements() []Element {
	out := make([]Element, len(c.items))
	for i, it := range c.items {
		out[i] = it.Element
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Contains reports whether e is present.
func (c Composition) Contains(e Element) bool { return c.Amount(e) > 0 }

// Amount returns the amount of e (0 when absent).
func (c Composition) Amount(e Element) float64 {
	for _, it := range c.items {
		if it.Element == e {
			return it.Amount
		}
	}
	return 0
}

// NumAtoms is the total amount of all elements.
func (c Composition) NumAtoms() float64 {
	n := 0.0
	for _, it := range c.items {
		n += it.Amount
	}
	return n
}

// Weight is the formula weight in unified atomic mass units (g/mol).
func (c Composition) Weight() float64 {
	w := 0.0
	for _, it := range c.items {
		w += it.Amount * it.Element.Mass()
	}
	return w
}

// AtomicFraction is the amount of e divided by the number of atoms.
func (c Composition) AtomicFraction(e Element) float64 {
	n := c.NumAtoms()
	if n == 0 {
		return 0
	}
	return c.Amount(e) / n
}

// Fractional returns the composition normalised to one atom in total.
func (c Composition) Fractional() Composition {
	return c.Scale(1 / c.NumAtoms())
}

// Scale multiplies every amount by f.
func (c Composition) Scale(f float64) Composition {
	items := make([]ElementAmount, len(c.items))
	for i, it := range c.items {
		items[i] = ElementAmount{it.Element, it.Amount * f}
	}
	return Composition{items}
}

// Equal reports whether c and d have the same elements with amounts equal to
// within tol (absolute).
func (c Composition) Equal(d Composition, tol float64) bool {
	if len(c.items) != len(d.items) {
		return false
	}
	for _, it := range c.items {
		if math.Abs(d.Amount(it.Element)-it.Amount) > tol {
			return false
		}
	}
	return true
}

// SameReduced reports whether c and d have the same fractional composition.
func (c Composition) SameReduced(d Composition) bool {
	return c.Fractional().Equal(d.Fractional(), 1e-8)
}

// ChemicalSystem is the sorted, dash-joined element symbols ("Fe-Li-O").
func (c Composition) ChemicalSystem() string {
	syms := make([]string, len(c.items))
	for i, it := range c.items {
		syms[i] = it.Element.Symbol()
	}
	sort.Strings(syms)
	return strings.Join(syms, "-")
}

// Formula is pymatgen's Composition.formula: elements by increasing
// electronegativity, each with its amount, separated by spaces ("Fe2 O3",
// "Na1 Cl1").
func (c Composition) Formula() string {
	items := c.byElectronegativity(false)
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.Element.Symbol() + formatAmount(it.Amount, false)
	}
	return strings.Join(parts, " ")
}

// byElectronegativity orders the items by Pauling electronegativity. With
// bySymbol, ties are broken by symbol (pymatgen's reduce_formula); otherwise
// the given order is kept (pymatgen's formula property, a stable sort).
func (c Composition) byElectronegativity(bySymbol bool) []ElementAmount {
	items := c.Items()
	sort.SliceStable(items, func(i, j int) bool {
		xi, xj := items[i].Element.X(), items[j].Element.X()
		if xi != xj {
			return xi < xj
		}
		return bySymbol && items[i].Element.Symbol() < items[j].Element.Symbol()
	})
	return items
}

// isInteger reports whether every amount is an integer within tolerance.
func (c Composition) isInteger() bool {
	for _, it := range c.items {
		if math.Abs(it.Amount-math.Round(it.Amount)) >= amountTolerance {
			return false
		}
	}
	return true
}

// specialFormulas are pymatgen's names for molecular solids and peroxides
// whose reduced formula would otherwise hide the molecule.
var specialFormulas = map[string]string{
	"LiO": "Li2O2", "NaO": "Na2O2", "KO": "K2O2", "HO": "H2O2", "CsO": "Cs2O2",
	"RbO": "Rb2O2", "O": "O2", "N": "N2", "F": "F2", "Cl": "Cl2", "H": "H2",
}

// ReducedFormula is pymatgen's reduced formula: amounts divided by their
// greatest common divisor, elements by increasing electronegativity (ties by
// symbol), a trailing polyanion written in parentheses, and the special
// formulas of diatomic elements and peroxides (O2, Li2O2). Compositions with
// non-integer amounts are not reduced ("Li0.5Co1O2").
func (c Composition) ReducedFormula() string {
	f, _ := c.ReducedFormulaAndFactor()
	return f
}

// ReducedFormulaAndFactor returns the reduced formula and the factor by
// which c is a multiple of it.
func (c Composition) ReducedFormulaAndFactor() (string, float64) {
	if !c.isInteger() {
		return strings.ReplaceAll(c.Formula(), " ", ""), 1
	}
	amounts := make(map[Element]int, len(c.items))
	for _, it := range c.items {
		amounts[it.Element] = int(math.Round(it.Amount))
	}
	formula, factor := reduceFormula(amounts)
	if s, ok := specialFormulas[formula]; ok {
		formula = s
		factor /= 2
	}
	return formula, factor
}

// reduceFormula follows pymatgen.core.composition.reduce_formula.
func reduceFormula(amounts map[Element]int) (string, float64) {
	items := make([]ElementAmount, 0, len(amounts))
	for e, a := range amounts {
		items = append(items, ElementAmount{e, float64(a)})
	}
	sort.Slice(items, func(i, j int) bool {
		xi, xj := items[i].Element.X(), items[j].Element.X()
		if xi != xj {
			return xi < xj
		}
		return items[i].Element.Symbol() < items[j].Element.Symbol()
	})
	factor := 0
	for _, it := range items {
		factor = GCD(factor, int(it.Amount))
	}
	if factor == 0 {
		factor = 1
	}
	var poly string
	n := len(items)
	if n >= 3 && items[n-1].Element.X()-items[n-2].Element.X() < 1.65 {
		sub := map[Element]int{
			items[n-2].Element: int(items[n-2].Amount) / factor,
			items[n-1].Element: int(items[n-1].Amount) / factor,
		}
		pf, pfac := reduceFormula(sub)
		if pfac != 1 {
			poly = "(" + pf + ")" + strconv.Itoa(int(pfac))
			items = items[:n-2]
		}
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Element.Symbol())
		b.WriteString(formatAmount(it.Amount/float64(factor), true))
	}
	b.WriteString(poly)
	return b.String(), float64(factor)
}

// GCD is the greatest common divisor of |a| and |b| (0 for two zeros).
func GCD(a, b int) int {
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// formatAmount is pymatgen's formula_double_format: "" for 1 when
// ignoreOnes, integers without a decimal point, others rounded to 8 places.
func formatAmount(x float64, ignoreOnes bool) string {
	if ignoreOnes && x == 1 {
		return ""
	}
	if math.Abs(x-math.Trunc(x)) < 1e-8 {
		return strconv.Itoa(int(x))
	}
	return strconv.FormatFloat(math.Round(x*1e8)/1e8, 'f', -1, 64)
}

// ReducedComposition returns c divided by its reduction factor.
func (c Composition) ReducedComposition() Composition {
	_, f := c.ReducedFormulaAndFactor()
	return c.Scale(1 / f)
}

// AnonymousFormula is pymatgen's anonymized_formula: the amounts divided by
// their greatest common divisor (when all are integers), in increasing order,
// labelled A, B, C, … ("ABC3" for SrTiO3, "A2B3" for Fe2O3, "A" for O2).
func (c Composition) AnonymousFormula() string {
	amts := make([]float64, 0, c.Len())
	g := 0
	for _, it := range c.items {
		amts = append(amts, it.Amount)
		g = GCD(g, int(math.Round(it.Amount)))
	}
	if c.isInteger() && g > 0 {
		for i := range amts {
			amts[i] = math.Round(amts[i]) / float64(g)
		}
	}
	sort.Float64s(amts)
	var b strings.Builder
	for i, a := range amts {
		b.WriteString(anonymousLabel(i))
		switch {
		case a == 1:
		case math.Abs(math.Mod(a, 1)) < amountTolerance:
			b.WriteString(strconv.Itoa(int(a)))
		default:
			b.WriteString(strconv.FormatFloat(a, 'g', -1, 64))
		}
	}
	return b.String()
}

func anonymousLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return string(rune('A'+i/26-1)) + string(rune('a'+i%26))
}

// String returns the reduced formula.
func (c Composition) String() string { return c.ReducedFormula() }

// MarshalText writes the composition as its Formula without spaces, which
// ParseFormula reads back exactly.
func (c Composition) MarshalText() ([]byte, error) {
	return []byte(strings.ReplaceAll(c.Formula(), " ", "")), nil
}

// UnmarshalText parses a formula.
func (c *Composition) UnmarshalText(b []byte) error {
	p, err := ParseFormula(string(b))
	if err != nil {
		return err
	}
	*c = p
	return nil
}
