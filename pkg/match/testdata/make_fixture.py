#!/usr/bin/python3
"""Writes pymatgen_fit.csv: pymatgen 2022.11.7's StructureMatcher (default
options: ltol 0.2, stol 0.3, angle_tol 5, primitive_cell, scale, no
supercell) on pairs of structures, for the Go matcher's agreement test.

Structures are named "SOURCE:ID":
  hand:NAME     a structure of structures/NAME.json (built here, below)
  diel:MP-ID    a CIF of DATA/mp_dielectric_petousis2017.csv
  piezo:MP-ID   a CIF of DATA/mp_piezo_dejong2015.csv
and may carry transformations, applied in order and reimplemented in the
Go test (on the lattice rows, species and fractional coordinates, not
through pymatgen's own operations, so both sides do the same arithmetic):
  rot:X,Y,Z,DEG    rotate the Cartesian frame about axis (X,Y,Z)
  shift:X,Y,Z      add a fractional vector to every site
  rev              reverse the site order
  sc:NA,NB,NC      supercell; sites by original site, then a, b, c
  strain:E1..E6    lattice rows times (I + e), e symmetric, Voigt order
                   xx, yy, zz, yz, xz, xy
  noise:AMP        site i (from 0) moves by AMP·(sin 1.3(i+1),
                   cos 2.1(i+1), sin(0.7(i+1)+1)) Å, Cartesian
Pairs: every hand-built structure against transformed copies of itself
and against its polymorphs; every pair of MP entries of one reduced
formula (both sets pooled, the same id in both sets included); a sample
of MP entries against transformed copies of themselves.
Columns: a, a_transform, b, b_transform, fit (fit(a, b)), rms
(get_rms_dist(a, b)[0], empty when None), and the seconds pymatgen took.
Run: make_fixture.py DATA/ (writes structures/*.json and pymatgen_fit.csv
next to this script).
"""
import csv, json, math, os, random, sys, time, warnings

warnings.filterwarnings("ignore")
import numpy as np
from pymatgen.analysis.structure_matcher import StructureMatcher
from pymatgen.core import Composition, Lattice, Structure

here = os.path.dirname(os.path.abspath(__file__))
data = sys.argv[1]
csv.field_size_limit(1 << 28)

# Hand-built structures, conventional cells from their space groups.
hand = {
    "NaCl-rocksalt": Structure.from_spacegroup("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]),
    "NaCl-cscl": Structure.from_spacegroup("Pm-3m", Lattice.cubic(3.35), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]),
    "KCl-rocksalt": Structure.from_spacegroup("Fm-3m", Lattice.cubic(6.29), ["K", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]),
    "ZnS-zincblende": Structure.from_spacegroup("F-43m", Lattice.cubic(5.41), ["Zn", "S"], [[0, 0, 0], [0.25, 0.25, 0.25]]),
    "ZnS-wurtzite": Structure.from_spacegroup("P6_3mc", Lattice.hexagonal(3.82, 6.26), ["Zn", "S"], [[1 / 3, 2 / 3, 0], [1 / 3, 2 / 3, 0.375]]),
    "TiO2-rutile": Structure.from_spacegroup("P4_2/mnm", Lattice.tetragonal(4.594, 2.959), ["Ti", "O"], [[0, 0, 0], [0.3048, 0.3048, 0]]),
    "TiO2-anatase": Structure.from_spacegroup("I4_1/amd", Lattice.tetragonal(3.785, 9.514), ["Ti", "O"], [[0, 0, 0], [0, 0, 0.2081]]),
    "SrTiO3-perovskite": Structure.from_spacegroup("Pm-3m", Lattice.cubic(3.905), ["Sr", "Ti", "O"], [[0.5, 0.5, 0.5], [0, 0, 0], [0.5, 0, 0]]),
}
os.makedirs(os.path.join(here, "structures"), exist_ok=True)
for name, s in hand.items():
    with open(os.path.join(here, "structures", name + ".json"), "w") as f:
        json.dump(s.as_dict(), f, indent=1)
        f.write("\n")


def read_set(file, prefix):
    out = {}
    with open(os.path.join(data, file)) as f:
        for r in csv.DictReader(f):
            out[prefix + ":" + r["material_id"]] = r["cif"]
    return out


cifs = {}
cifs.update(read_set("mp_dielectric_petousis2017.csv", "diel"))
cifs.update(read_set("mp_piezo_dejong2015.csv", "piezo"))
cache = {}


def load(name):
    if name not in cache:
        src, _ = name.split(":", 1)
        if src == "hand":
            cache[name] = hand[name.split(":", 1)[1]]
        else:
            cache[name] = Structure.from_str(cifs[name], fmt="cif")
    return cache[name]


def transform(s, spec):
    lat = np.array(s.lattice.matrix)
    species = [str(sp) for sp in s.species]
    frac = np.array(s.frac_coords)
    for op in filter(None, spec.split(";")):
        kind, _, arg = op.partition(":")
        x = [float(v) for v in arg.split(",")] if arg else []
        if kind == "rot":
            u = np.array(x[:3]) / np.linalg.norm(x[:3])
            t = math.radians(x[3])
            k = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
            r = np.eye(3) + math.sin(t) * k + (1 - math.cos(t)) * (k @ k)
            lat = lat @ r.T
        elif kind == "shift":
            frac = frac + np.array(x)
        elif kind == "rev":
            species, frac = species[::-1], frac[::-1]
        elif kind == "sc":
            n = [int(v) for v in x]
            sp2, f2 = [], []
            for e, f in zip(species, frac):
                f = f - np.floor(f)
                for a in range(n[0]):
                    for b in range(n[1]):
                        for c in range(n[2]):
                            sp2.append(e)
                            f2.append([(f[0] + a) / n[0], (f[1] + b) / n[1], (f[2] + c) / n[2]])
            species, frac = sp2, np.array(f2)
            lat = lat * np.array(n)[:, None]
        elif kind == "strain":
            e = np.array([[x[0], x[5], x[4]], [x[5], x[1], x[3]], [x[4], x[3], x[2]]])
            lat = lat @ (np.eye(3) + e)
        elif kind == "noise":
            cart = frac @ lat
            for i in range(len(cart)):
                j = i + 1
                cart[i] += x[0] * np.array([math.sin(1.3 * j), math.cos(2.1 * j), math.sin(0.7 * j + 1)])
            frac = cart @ np.linalg.inv(lat)
        else:
            raise ValueError(op)
    return Structure(Lattice(lat), species, frac)


pairs = []
transforms = [
    "rot:1,2,3,37",
    "shift:0.13,0.27,0.61",
    "rev",
    "rot:0,0,1,90;shift:0.5,0.25,0.1;rev",
    "sc:2,1,1",
    "sc:1,2,2;rot:1,1,0,20",
    "strain:0.05,0,0,0,0,0",
    "strain:0.15,0,0,0,0,0",
    "strain:0.3,0,0,0,0,0",
    "strain:0,0,0,0.05,0,0",
    "strain:0,0,0,0.15,0,0",
    "strain:0,0,0,0.3,0,0",
    "strain:0.05,0.05,0.05,0,0,0",
    "strain:0.3,0.3,0.3,0,0,0",
    "noise:0.05",
    "noise:0.2",
    "noise:0.5",
]
for name in hand:
    for t in [""] + transforms:
        pairs.append(("hand:" + name, "", "hand:" + name, t))
polymorphs = [("NaCl-rocksalt", "NaCl-cscl"), ("ZnS-zincblende", "ZnS-wurtzite"), ("TiO2-rutile", "TiO2-anatase"), ("NaCl-rocksalt", "KCl-rocksalt")]
for a, b in polymorphs:
    for t in ["", "rot:1,2,3,37;rev", "strain:0.15,0,0,0,0,0", "noise:0.2"]:
        pairs.append(("hand:" + a, "", "hand:" + b, t))
        pairs.append(("hand:" + b, "", "hand:" + a, t))

by_formula = {}
for name in sorted(cifs):
    f = Composition(load(name).composition).reduced_formula
    by_formula.setdefault(f, []).append(name)
for f in sorted(by_formula):
    names = by_formula[f]
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            pairs.append((names[i], "", names[j], ""))

rng = random.Random(20261126)
small = sorted(n for n in cifs if len(load(n)) <= 12)
for name in rng.sample(small, 30):
    for t in ["rot:1,2,3,37;shift:0.13,0.27,0.61;rev", "sc:2,1,1", "strain:0.15,0,0,0,0,0", "strain:0,0,0,0.3,0,0", "noise:0.2"]:
        pairs.append((name, "", name, t))

sm = StructureMatcher()
with open(os.path.join(here, "pymatgen_fit.csv"), "w") as out:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["a", "a_transform", "b", "b_transform", "fit", "rms", "seconds"])
    for a, ta, b, tb in pairs:
        sa, sb = transform(load(a), ta), transform(load(b), tb)
        t0 = time.perf_counter()
        fit = sm.fit(sa, sb)
        rms = sm.get_rms_dist(sa, sb)
        dt = time.perf_counter() - t0
        w.writerow([a, ta, b, tb, "true" if fit else "false", "" if rms is None else "%.6g" % rms[0], "%.4f" % dt])
