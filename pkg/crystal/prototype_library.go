package crystal

import (
	"fmt"
	"math"
	"slices"
)

// The prototype library. Site positions are the Wyckoff positions of the
// International Tables for Crystallography, vol. A (standard settings:
// origin choice 2 for Fd-3m, hexagonal axes for the rhombohedral groups);
// structural parameters not fixed by symmetry are those of the archetype
// as cited at each entry. Each builder receives the radius of each site
// (in Sites order) and sets the cation–anion bond d = r_cation + r_anion.
var prototypeLibrary = []Prototype{
	{
		// Fm-3m, A 4a (0,0,0), X 4b (½,½,½): octahedral both; d = a/2.
		Name: "rocksalt", CommonName: "rock salt (NaCl)", Strukturbericht: "B1", SpaceGroup: "Fm-3m (225)",
		Stoichiometry: "AX", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 1, "VI"}, {"X", Anion, 1, "VI"}},
		build: func(r []float64) (protoCell, error) {
			a := 2 * (r[0] + r[1])
			return protoCell{fccPrimitive(a), [][]Vec3{{{0, 0, 0}}, {{0.5, 0.5, 0.5}}}, map[string]float64{"a": a}}, nil
		},
	},
	{
		// Pm-3m, A 1a (0,0,0), X 1b (½,½,½): cubic 8-fold; d = a√3/2.
		Name: "cscl", CommonName: "caesium chloride (CsCl)", Strukturbericht: "B2", SpaceGroup: "Pm-3m (221)",
		Stoichiometry: "AX", FormulaUnits: 1, Intermetallic: true,
		Sites: []PrototypeSite{{"A", Cation, 1, "VIII"}, {"X", Anion, 1, "VIII"}},
		build: func(r []float64) (protoCell, error) {
			a := 2 * (r[0] + r[1]) / math.Sqrt(3)
			return protoCell{cubic(a), [][]Vec3{{{0, 0, 0}}, {{0.5, 0.5, 0.5}}}, map[string]float64{"a": a}}, nil
		},
	},
	{
		// F-43m, A 4a (0,0,0), X 4c (¼,¼,¼): tetrahedral both; d = a√3/4.
		Name: "zincblende", CommonName: "zinc blende (sphalerite, ZnS)", Strukturbericht: "B3", SpaceGroup: "F-43m (216)",
		Stoichiometry: "AX", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 1, "IV"}, {"X", Anion, 1, "IV"}},
		build: func(r []float64) (protoCell, error) {
			a := 4 * (r[0] + r[1]) / math.Sqrt(3)
			return protoCell{fccPrimitive(a), [][]Vec3{{{0, 0, 0}}, {{0.25, 0.25, 0.25}}}, map[string]float64{"a": a}}, nil
		},
	},
	{
		// P6₃mc, A 2b (⅓,⅔,0), X 2b (⅓,⅔,u), ideal c/a = √(8/3) and
		// u = 3/8, where the four bonds are equal: d = u·c = a√(3/8)
		// (ZnO itself: c/a = 1.602, u = 0.382).
		Name: "wurtzite", CommonName: "wurtzite (ZnS)", Strukturbericht: "B4", SpaceGroup: "P6_3mc (186)",
		Stoichiometry: "AX", FormulaUnits: 2,
		Sites: []PrototypeSite{{"A", Cation, 1, "IV"}, {"X", Anion, 1, "IV"}},
		build: func(r []float64) (protoCell, error) {
			const u = 3.0 / 8
			a := (r[0] + r[1]) / math.Sqrt(3.0/8)
			c := a * math.Sqrt(8.0/3)
			l, err := hexagonal(a, c)
			return protoCell{l, [][]Vec3{
				{{1.0 / 3, 2.0 / 3, 0}, {2.0 / 3, 1.0 / 3, 0.5}},
				{{1.0 / 3, 2.0 / 3, u}, {2.0 / 3, 1.0 / 3, 0.5 + u}},
			}, map[string]float64{"a": a, "c": c, "u": u}}, err
		},
	},
	{
		// Fm-3m, A 4a (0,0,0) cubic 8-fold, X 8c (¼,¼,¼) tetrahedral;
		// d = a√3/4.
		Name: "fluorite", CommonName: "fluorite (CaF2)", Strukturbericht: "C1", SpaceGroup: "Fm-3m (225)",
		Stoichiometry: "AX2", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 1, "VIII"}, {"X", Anion, 2, "IV"}},
		build: func(r []float64) (protoCell, error) {
			a := 4 * (r[0] + r[1]) / math.Sqrt(3)
			return protoCell{fccPrimitive(a), [][]Vec3{{{0, 0, 0}}, {{0.25, 0.25, 0.25}, {0.75, 0.75, 0.75}}}, map[string]float64{"a": a}}, nil
		},
	},
	{
		// Fluorite with cations and anions exchanged: A 8c tetrahedral,
		// X 4a cubic 8-fold (Li2O, Na2O, Mg2Si).
		Name: "antifluorite", CommonName: "antifluorite (Li2O)", Strukturbericht: "C1", SpaceGroup: "Fm-3m (225)",
		Stoichiometry: "A2X", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 2, "IV"}, {"X", Anion, 1, "VIII"}},
		build: func(r []float64) (protoCell, error) {
			a := 4 * (r[0] + r[1]) / math.Sqrt(3)
			return protoCell{fccPrimitive(a), [][]Vec3{{{0.25, 0.25, 0.25}, {0.75, 0.75, 0.75}}, {{0, 0, 0}}}, map[string]float64{"a": a}}, nil
		},
	},
	{
		// P4₂/mnm, A 2a (0,0,0), X 4f (u,u,0) with TiO2's c/a = 0.6441 and
		// u = 0.3048 (Burdett et al., J. Am. Chem. Soc. 109, 3639 (1987):
		// a = 4.5937, c = 2.9587 Å, x = 0.30478); the octahedron has four
		// equatorial and two apical bonds, and a is set so their mean is d.
		Name: "rutile", CommonName: "rutile (TiO2)", Strukturbericht: "C4", SpaceGroup: "P4_2/mnm (136)",
		Stoichiometry: "AX2", FormulaUnits: 2,
		Sites: []PrototypeSite{{"A", Cation, 1, "VI"}, {"X", Anion, 2, "III"}},
		build: func(r []float64) (protoCell, error) {
			const cOverA, u = 0.6441, 0.3048
			frac := [][]Vec3{
				{{0, 0, 0}, {0.5, 0.5, 0.5}},
				{{u, u, 0}, {1 - u, 1 - u, 0}, {0.5 + u, 0.5 - u, 0.5}, {0.5 - u, 0.5 + u, 0.5}},
			}
			return scaledCell(func(a float64) (Lattice, error) { return tetragonal(a, cOverA*a) }, frac, 0, 1, 6, r[0]+r[1],
				map[string]float64{"c/a": cOverA, "u": u})
		},
	},
	{
		// Pm-3m, B 1a (0,0,0) octahedral, A 1b (½,½,½) 12-fold, X 3d;
		// a = 2 (r_B + r_X). Goldschmidt's tolerance factor (Naturwiss. 14,
		// 477 (1926)) says how well A fits the cuboctahedral cavity.
		Name: "perovskite", CommonName: "cubic perovskite (SrTiO3)", Strukturbericht: "E2_1", SpaceGroup: "Pm-3m (221)",
		Stoichiometry: "ABX3", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 1, "XII"}, {"B", Cation, 1, "VI"}, {"X", Anion, 3, "VI"}},
		build: func(r []float64) (protoCell, error) {
			a := 2 * (r[1] + r[2])
			t := (r[0] + r[2]) / (math.Sqrt2 * (r[1] + r[2]))
			return protoCell{cubic(a), [][]Vec3{
				{{0.5, 0.5, 0.5}},
				{{0, 0, 0}},
				{{0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5}},
			}, map[string]float64{"a": a, "t": t}}, nil
		},
	},
	{
		// Fd-3m origin choice 2: A 8a tetrahedral, B 16d octahedral,
		// X 32e (x,x,x). With u = x + ⅛ (the origin-choice-1 parameter,
		// ideal ⅜) the bonds are R_T = a√3 (u − ¼) and
		// R_O = a √(3u² − 11u/4 + 43/64) (Hill, Craig & Gibbs, Phys. Chem.
		// Minerals 4, 317 (1979)); u is solved so R_T/R_O matches the radii
		// (MgAl2O4: u = 0.3874, x = 0.2624) within the observed range
		// 0.355 ≤ u ≤ 0.400, and a fits both bonds by least squares (exact
		// when u is not clamped).
		Name: "spinel", CommonName: "normal spinel (MgAl2O4)", Strukturbericht: "H1_1", SpaceGroup: "Fd-3m (227)",
		Stoichiometry: "AB2X4", FormulaUnits: 2,
		Sites: []PrototypeSite{{"A", Cation, 1, "IV"}, {"B", Cation, 2, "VI"}, {"X", Anion, 4, "IV"}},
		build: buildSpinel,
	},
	{
		// R-3c (hexagonal axes), A 12c (0,0,z), X 18e (x,0,¼), with
		// α-Al2O3's c/a = 2.7296, z = 0.35216, x = 0.30624 (Lewis,
		// Schwarzenbach & Flack, Acta Cryst. A38, 733 (1982): a = 4.7602,
		// c = 12.9933 Å); a is set so the mean of the three short and three
		// long cation–anion bonds is d.
		Name: "corundum", CommonName: "corundum (α-Al2O3)", Strukturbericht: "D5_1", SpaceGroup: "R-3c (167)",
		Stoichiometry: "A2X3", FormulaUnits: 2,
		Sites: []PrototypeSite{{"A", Cation, 2, "VI"}, {"X", Anion, 3, "IV"}},
		build: buildCorundum,
	},
	{
		// P6₃/mmc, A 2a (0,0,0) octahedral, X 2c (⅓,⅔,¼) trigonal
		// prismatic, with the ideal c/a = √(8/3) of hexagonal close-packed
		// anions (regular octahedra, d = a/√2). NiAs itself has c/a = 1.39
		// from Ni–Ni bonding; FeS, CoS, MnTe, CrSb lie between.
		Name: "nias", CommonName: "nickeline (NiAs)", Strukturbericht: "B8_1", SpaceGroup: "P6_3/mmc (194)",
		Stoichiometry: "AX", FormulaUnits: 2, Intermetallic: true,
		Sites: []PrototypeSite{{"A", Cation, 1, "VI"}, {"X", Anion, 1, "VI"}},
		build: func(r []float64) (protoCell, error) {
			a := (r[0] + r[1]) * math.Sqrt2
			c := a * math.Sqrt(8.0/3)
			l, err := hexagonal(a, c)
			return protoCell{l, [][]Vec3{
				{{0, 0, 0}, {0, 0, 0.5}},
				{{1.0 / 3, 2.0 / 3, 0.25}, {2.0 / 3, 1.0 / 3, 0.75}},
			}, map[string]float64{"a": a, "c": c}}, err
		},
	},
	{
		// P-3m1, A 1a (0,0,0) octahedral, X 2d (⅓,⅔,z), layers of
		// edge-sharing octahedra separated by a van der Waals gap; c/a =
		// 1.614 and z = ¼ of CdI2 (a = 4.24, c = 6.84 Å; Wyckoff, Crystal
		// Structures, vol. 1, 2nd ed. (1963)); d² = a²/3 + (z c)².
		Name: "cdi2", CommonName: "cadmium iodide (CdI2)", Strukturbericht: "C6", SpaceGroup: "P-3m1 (164)",
		Stoichiometry: "AX2", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 1, "VI"}, {"X", Anion, 2, "III"}},
		build: func(r []float64) (protoCell, error) {
			const cOverA, z = 1.614, 0.25
			a := (r[0] + r[1]) / math.Sqrt(1.0/3+z*z*cOverA*cOverA)
			c := cOverA * a
			l, err := hexagonal(a, c)
			return protoCell{l, [][]Vec3{
				{{0, 0, 0}},
				{{1.0 / 3, 2.0 / 3, z}, {2.0 / 3, 1.0 / 3, -z}},
			}, map[string]float64{"a": a, "c": c, "z": z}}, err
		},
	},
	{
		// R-3m (hexagonal axes), B 3a (0,0,0), A 3b (0,0,½), X 6c (0,0,z):
		// the cation-ordered rock salt of LiCoO2 and NaFeO2, alternating
		// layers of AX6 and BX6 octahedra.
		Name: "nafeo2", CommonName: "α-NaFeO2 (layered rock salt, LiCoO2)", SpaceGroup: "R-3m (166)",
		Stoichiometry: "ABX2", FormulaUnits: 1,
		Sites: []PrototypeSite{{"A", Cation, 1, "VI"}, {"B", Cation, 1, "VI"}, {"X", Anion, 2, "VI"}},
		build: buildNaFeO2,
	},
}

// fccPrimitive is the primitive cell of the face-centred cubic lattice of
// conventional edge a: rows (0,½,½)a, (½,0,½)a, (½,½,0)a.
func fccPrimitive(a float64) Lattice {
	h := a / 2
	l, _ := NewLattice([3][3]float64{{0, h, h}, {h, 0, h}, {h, h, 0}}) // volume a³/4 > 0 for a > 0
	return l
}

func cubic(a float64) Lattice {
	l, _ := NewLattice([3][3]float64{{a, 0, 0}, {0, a, 0}, {0, 0, a}})
	return l
}

func tetragonal(a, c float64) (Lattice, error) {
	return NewLattice([3][3]float64{{a, 0, 0}, {0, a, 0}, {0, 0, c}})
}

func hexagonal(a, c float64) (Lattice, error) {
	return LatticeFromParameters(a, a, c, 90, 90, 120)
}

// Rhombohedral centring of hexagonal axes (obverse setting) and the
// primitive rhombohedral vectors in those axes (International Tables A,
// Table 5.1.3.1).
var (
	rhombohedralCentring  = []Vec3{{0, 0, 0}, {2.0 / 3, 1.0 / 3, 1.0 / 3}, {1.0 / 3, 2.0 / 3, 2.0 / 3}}
	rhombohedralPrimitive = [3]Vec3{{2.0 / 3, 1.0 / 3, 1.0 / 3}, {-1.0 / 3, 1.0 / 3, 1.0 / 3}, {-1.0 / 3, -2.0 / 3, 1.0 / 3}}
	faceCentring          = []Vec3{{0, 0, 0}, {0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}}
	facePrimitive         = [3]Vec3{{0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}}
)

// primitiveCell turns a centred conventional cell into its primitive cell:
// every position of each site plus every centring translation is
// expressed in the primitive basis prim (rows in conventional fractional
// coordinates), wrapped into [0, 1) and deduplicated.
func primitiveCell(conv Lattice, frac [][]Vec3, centring []Vec3, prim [3]Vec3) (Lattice, [][]Vec3, error) {
	var m [3][3]float64
	for i := range prim {
		m[i] = conv.Cartesian(prim[i])
	}
	pl, err := NewLattice(m)
	if err != nil {
		return Lattice{}, nil, err
	}
	out := make([][]Vec3, len(frac))
	for k, pos := range frac {
		for _, f := range pos {
			for _, t := range centring {
				p := pl.Fractional(conv.Cartesian(f.Add(t)))
				for a := range p {
					p[a] = wrap(math.Round(p[a]*1e9) / 1e9)
				}
				dup := slices.ContainsFunc(out[k], func(q Vec3) bool {
					d := p.Sub(q)
					for a := range d {
						d[a] -= math.Round(d[a])
					}
					return d.Norm() < 1e-6
				})
				if !dup {
					out[k] = append(out[k], p)
				}
			}
		}
		// Centring vectors are translations of the primitive lattice, so the
		// positions given (one per centring coset) are all that remain.
		if len(out[k]) != len(pos) {
			return Lattice{}, nil, fmt.Errorf("site %d: %d positions in the primitive cell, want %d (positions not distinct modulo centring)", k, len(out[k]), len(pos))
		}
	}
	return pl, out, nil
}

// meanBond is the mean of the n shortest distances (Å) from the point at
// fractional position from to the points to and their periodic images.
func meanBond(l Lattice, from Vec3, to []Vec3, n int) float64 {
	var d []float64
	for _, p := range to {
		for i := -2; i <= 2; i++ {
			for j := -2; j <= 2; j++ {
				for k := -2; k <= 2; k++ {
					v := p.Add(Vec3{float64(i), float64(j), float64(k)}).Sub(from)
					d = append(d, l.Cartesian(v).Norm())
				}
			}
		}
	}
	slices.Sort(d)
	sum := 0.0
	for _, x := range d[:n] {
		sum += x
	}
	return sum / float64(n)
}

// scaledCell builds a cell of fixed shape (lattice(a) for any a) and sets a
// so that the mean of the cn bonds from the first atom of site from to the
// atoms of site to is d.
func scaledCell(lattice func(a float64) (Lattice, error), frac [][]Vec3, from, to, cn int, d float64, params map[string]float64) (protoCell, error) {
	unit, err := lattice(1)
	if err != nil {
		return protoCell{}, err
	}
	a := d / meanBond(unit, frac[from][0], frac[to], cn)
	l, err := lattice(a)
	if err != nil {
		return protoCell{}, err
	}
	params["a"] = a
	if ca, ok := params["c/a"]; ok {
		params["c"] = ca * a
		delete(params, "c/a")
	}
	return protoCell{l, frac, params}, nil
}

func buildSpinel(r []float64) (protoCell, error) {
	rT, rO := r[0]+r[2], r[1]+r[2]
	gT := func(u float64) float64 { return math.Sqrt(3) * (u - 0.25) }
	gO := func(u float64) float64 { return math.Sqrt(3*u*u - 11*u/4 + 43.0/64) }
	// R_T/R_O = gT/gO increases with u on [0.355, 0.400]: bisect.
	lo, hi := 0.355, 0.400
	want := rT / rO
	switch {
	case gT(lo)/gO(lo) >= want:
		hi = lo
	case gT(hi)/gO(hi) <= want:
		lo = hi
	default:
		for it := 0; it < 60; it++ {
			mid := (lo + hi) / 2
			if gT(mid)/gO(mid) < want {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	u := (lo + hi) / 2
	// Least squares over the bonds of a formula unit: 4 tetrahedral, 12
	// octahedral: a = Σ w g R / Σ w g².
	a := (4*gT(u)*rT + 12*gO(u)*rO) / (4*gT(u)*gT(u) + 12*gO(u)*gO(u))
	x := u - 0.125
	conv := cubic(a)
	frac := [][]Vec3{
		{{0.125, 0.125, 0.125}, {0.875, 0.375, 0.375}},
		{{0.5, 0.5, 0.5}, {0.25, 0.75, 0}, {0.75, 0, 0.25}, {0, 0.25, 0.75}},
		{
			{x, x, x}, {-x + 0.75, -x + 0.25, x + 0.5}, {-x + 0.25, x + 0.5, -x + 0.75}, {x + 0.5, -x + 0.75, -x + 0.25},
			{-x, -x, -x}, {x + 0.25, x + 0.75, -x + 0.5}, {x + 0.75, -x + 0.5, x + 0.25}, {-x + 0.5, x + 0.25, x + 0.75},
		},
	}
	l, pf, err := primitiveCell(conv, frac, faceCentring, facePrimitive)
	return protoCell{l, pf, map[string]float64{"a": a, "x": x, "u": u}}, err
}

func buildCorundum(r []float64) (protoCell, error) {
	const cOverA, z, x = 2.7296, 0.35216, 0.30624
	frac := [][]Vec3{
		{{0, 0, z}, {0, 0, 0.5 - z}, {0, 0, -z}, {0, 0, 0.5 + z}},
		{{x, 0, 0.25}, {0, x, 0.25}, {-x, -x, 0.25}, {-x, 0, 0.75}, {0, -x, 0.75}, {x, x, 0.75}},
	}
	unit, err := hexagonal(1, cOverA)
	if err != nil {
		return protoCell{}, err
	}
	// Every position of the conventional cell, for the bond measurement.
	var all [][]Vec3
	for _, pos := range frac {
		var s []Vec3
		for _, f := range pos {
			for _, t := range rhombohedralCentring {
				s = append(s, f.Add(t))
			}
		}
		all = append(all, s)
	}
	a := (r[0] + r[1]) / meanBond(unit, all[0][0], all[1], 6)
	conv, err := hexagonal(a, cOverA*a)
	if err != nil {
		return protoCell{}, err
	}
	l, pf, err := primitiveCell(conv, frac, rhombohedralCentring, rhombohedralPrimitive)
	return protoCell{l, pf, map[string]float64{"a": a, "c": cOverA * a, "z": z, "x": x}}, err
}

// buildNaFeO2 sets both octahedra to their bond lengths: with the in-plane
// anion–anion distance a, an octahedron of bond d spans a slab of height
// h = 2 √(d² − a²/3) along c. With B at z = 0 and A at z = ½, the slabs are
// h_B = 2 (⅓ − z) c and h_A = 2 (z − ⅙) c, so c = 3 (h_A + h_B) and
// z = ⅓ − h_B / (2c). a = √2 (d_A + d_B)/2 makes the mean octahedron
// regular; for LiCoO2 this gives a = 2.83, c = 13.8 Å (observed 2.816,
// 14.05).
func buildNaFeO2(r []float64) (protoCell, error) {
	dA, dB := r[0]+r[2], r[1]+r[2]
	a := math.Sqrt2 * (dA + dB) / 2
	hA2, hB2 := dA*dA-a*a/3, dB*dB-a*a/3
	if hA2 <= 0 || hB2 <= 0 {
		return protoCell{}, fmt.Errorf("octahedra of %.3f and %.3f Å cannot share an anion layer", dA, dB)
	}
	hA, hB := 2*math.Sqrt(hA2), 2*math.Sqrt(hB2)
	c := 3 * (hA + hB)
	z := 1.0/3 - hB/(2*c)
	conv, err := hexagonal(a, c)
	if err != nil {
		return protoCell{}, err
	}
	frac := [][]Vec3{{{0, 0, 0.5}}, {{0, 0, 0}}, {{0, 0, z}, {0, 0, -z}}}
	l, pf, err := primitiveCell(conv, frac, rhombohedralCentring, rhombohedralPrimitive)
	return protoCell{l, pf, map[string]float64{"a": a, "c": c, "z": z}}, err
}
