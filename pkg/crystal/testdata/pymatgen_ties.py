"""Regenerates pymatgen_ties.json: structures whose 12th and 13th nearest
neighbours are equidistant, with the neighbours CGCNN keeps for each site
(pymatgen's get_all_neighbors(8), stably sorted by distance, first 12).

The expected choices depend on pymatgen's floating-point arithmetic, so the
file must be produced with pymatgen 2022.11.7 (the version of the published
CGCNN reference predictions; Debian 12's python3-pymatgen) and numpy over
OpenBLAS. Only cells with right angles are generated: for other angles
numpy's vectorised cos/arccos round differently on different CPUs, so the
expected choice is not a property of the structure.

    python3 pymatgen_ties.py > pymatgen_ties.json
"""
import json
import random
import sys

from pymatgen.core import Lattice, Structure
from pymatgen.io.cif import CifWriter

ELEMENTS = ["Na", "Cl", "Mg", "O", "Sr", "Ti", "Ba", "Ga", "N", "Zn", "S", "Li", "F", "Ca", "Si"]


def candidates(rng, n):
    for t in range(n):
        a = rng.choice([3.0, 3.905, 4.0, 4.2, 5.64, round(2.5 + rng.random() * 3, 4)])
        shape = rng.choice([(1, 1, 1), (1, 1, 1.5), (1, 1, 2.0), (1, 1, 1.2345), (1, 1.25, 1.5)])
        lattice = Lattice.from_parameters(a * shape[0], a * shape[1], a * shape[2], 90, 90, 90)
        grid = rng.choice([2, 3, 4, 6])
        coords = set()
        nsites = rng.randint(1, 8)
        while len(coords) < nsites:
            coords.add(tuple(rng.randrange(grid) / grid for _ in range(3)))
        pool = ELEMENTS[: rng.randint(2, len(ELEMENTS))]
        coords = sorted(coords)
        yield t, Structure(lattice, [rng.choice(pool) for _ in coords], coords)


def main():
    rng = random.Random(7)
    out = []
    for t, s in candidates(rng, 600):
        cif = str(CifWriter(s))
        s = Structure.from_str(cif, fmt="cif")  # as CGCNN reads it
        if len(s) > 1 and min(s.distance_matrix[i][j] for i in range(len(s)) for j in range(i)) < 0.7:
            continue
        kept, tied = [], False
        for nbrs in s.get_all_neighbors(8, include_index=True):
            nbrs = sorted(nbrs, key=lambda x: x[1])
            if len(nbrs) > 12 and abs(nbrs[11][1] - nbrs[12][1]) < 1e-9:
                tied = True
            kept.append(sorted("%d:%d,%d,%d" % ((n[2],) + tuple(int(round(v)) for v in n[3])) for n in nbrs[:12]))
        if tied:
            out.append({"name": "tie-%03d" % t, "cif": cif, "kept": kept})
        if len(out) == 60:
            break
    json.dump({"generator": "pymatgen 2022.11.7, pymatgen_ties.py", "structures": out}, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
