"""Writes oxidation_pymatgen.json: pymatgen's oxidation-state guesses for a
fixed list of formulas, the reference for TestAssignOxidationStatesMatchesPymatgen.

Run with pymatgen 2022.11.7:  python3 oxidation_pymatgen.py > oxidation_pymatgen.json

Composition.oxi_state_guesses(all_oxi_states=False) draws from each element's
ICSD oxidation states (all states where none are observed), lets the atoms
of one element take different states, applies no electronegativity test, and
ranks solutions by ICSD occurrence. Crucible's equivalent options are
States: ICSDStates, MixedValence, NoElectronegativityTest, NoAlloys.
"""
import json

from pymatgen.core import Composition

FORMULAS = [
    "NaCl", "NaCl2", "Fe2O3", "FeO", "Fe3O4", "Co3O4", "Mn3O4", "Pb3O4",
    "SrTiO3", "BaTiO3", "LiFePO4", "LiCoO2", "LiCo2O4", "LiMn2O4", "GaN",
    "MgAl2O4", "Cu2ZnSnS4", "CsPbI3", "Al2O3", "TiO2", "Ti2O3", "VO2",
    "V2O5", "Cu2O", "CuO", "ZnO", "SiO2", "SiC", "GaAs", "CdTe", "CaF2",
    "Li2O", "LiO", "NaO3", "KO2", "BaO2", "AlNi3", "NiAl", "CuZn", "Fe7O9",
    "La2CuO4", "YBa2Cu3O7", "Ca3(PO4)2", "Na2SO4", "K2Cr2O7", "KMnO4",
    "Li3N", "Mg3N2", "CaC2", "Mo6S8", "NaAlSi3O8", "CsAu", "Au4Si3",
    "SnO", "SnO2", "Sn3O4", "PbO2", "Bi2Te3", "MoS2", "WO3", "NH4Cl",
    "Li7La3Zr2O12", "BiFeO3", "Ba2NaNb5O15", "Cu3N", "FeS2", "NiS2",
]

out = []
for f in FORMULAS:
    comp = Composition(f).reduced_composition
    guesses = comp.oxi_state_guesses(all_oxi_states=False)
    out.append({
        "formula": f,
        "neutral": len(guesses) > 0,
        "best": {el: round(v, 6) for el, v in guesses[0].items()} if guesses else None,
    })
print(json.dumps({"pymatgen": "2022.11.7", "cases": out}, indent=1))
