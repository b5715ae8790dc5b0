"""Regenerates formats_reference.json: how pymatgen and ASE read the
hand-made POSCAR and extended XYZ files of poscar/ and xyz/, for
TestFixturesReadAsPymatgenAndASE. Each entry is the lattice matrix (rows
a, b, c in Å), the species and the fractional coordinates, site by site,
and names the reader. Files that one of them reads differently by design
are read with the other: the VASP 4 file with symbols on its comment line
(pymatgen ignores the comment line; ASE uses it), the volume-scaled POSCAR
(ASE 3.22 takes the negative scale as a length). Files neither reads (the
POSCAR with VASP 6.4.2's "Ti_pv/hash" species) or that Crucible refuses
(molecules, slabs, a VASP 4 file without species) are left out.

Produced with Debian 12's python3-pymatgen (2022.11.7) and python3-ase
(3.22.1):

    /usr/bin/python3 formats_reference.py > formats_reference.json
"""
import json
import warnings

import ase
import ase.io
import pymatgen.core
from pymatgen.io.vasp import Poscar

warnings.filterwarnings("ignore")


def pymatgen_poscar(path):
    s = Poscar.from_file(path).structure
    return {
        "reader": "pymatgen %s Poscar.from_file" % pymatgen.core.__version__,
        "matrix": s.lattice.matrix.tolist(),
        "species": [sp.symbol for sp in s.species],
        "frac": s.frac_coords.tolist(),
    }


def ase_read(fmt):
    def read(path):
        a = ase.io.read(path, format=fmt)
        return {
            "reader": "ase %s io.read(format=%r)" % (ase.__version__, fmt),
            "matrix": a.cell[:].tolist(),
            "species": a.get_chemical_symbols(),
            "frac": a.get_scaled_positions(wrap=False).tolist(),
        }
    return read


FILES = {
    "poscar/POSCAR_MgO_slab_selective": pymatgen_poscar,
    "poscar/POSCAR_NaCl_cartesian": pymatgen_poscar,
    "poscar/CONTCAR_Si_md": pymatgen_poscar,
    "poscar/POSCAR_Cu_volume": pymatgen_poscar,
    "poscar/POSCAR_ZnO_vasp4": ase_read("vasp"),
    "xyz/Si_diamond_ase.extxyz": ase_read("extxyz"),
    "xyz/ZnO_numbers.xyz": ase_read("extxyz"),
}

print(json.dumps({name: read(name) for name, read in FILES.items()}, indent=1))
