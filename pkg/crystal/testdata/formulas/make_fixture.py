#!/usr/bin/python3
"""Writes pymatgen_compositions.csv: pymatgen 2022.11.7's view of a sample of
the formulas of the Materials Project tables: 300 drawn at random (seed
20261121) from the formation-energy table (mp_e_form.csv, which writes no
parentheses), 100 parenthesised ones from the energy-above-hull table
(mp_e_hull.csv, "Sr(AlH)2" style), and a few hand-picked ones.
Run: make_fixture.py DATA/ > pymatgen_compositions.csv
"""
import csv, random, sys, warnings
warnings.filterwarnings("ignore")
from pymatgen.core import Composition

def formulas(name):
    return sorted({r["formula"] for r in csv.DictReader(open(sys.argv[1] + "/" + name))})

rng = random.Random(20261121)
sample = rng.sample(formulas("mp_e_form.csv"), 300)
paren = [f for f in formulas("mp_e_hull.csv") if "(" in f]
sample += rng.sample(paren, min(100, len(paren)))
sample += ["Fe2O3", "Sr(AlH)2", "K12O16V4", "Li0.5Co1O2", "C1Pt1", "Li2O2", "O2", "Na6O6", "SrTiO3", "LiFePO4"]
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["formula", "reduced_formula", "chemical_system", "anonymized_formula", "weight", "pymatgen_formula"])
seen = set()
for f in sample:
    if f in seen:
        continue
    seen.add(f)
    c = Composition(f)
    w.writerow([f, c.reduced_formula, c.chemical_system, c.anonymized_formula, repr(float(c.weight)), c.formula])
