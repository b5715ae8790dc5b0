"""Regenerates pymatgen_writer_reference.cif: pymatgen's CifWriter output
(significant_figures=16, the precision of crystal.WriteCIF) for the
structure of TestWriteCIFMatchesPymatgenLayout. Run with pymatgen 2022.11.7:

    python3 pymatgen_writer_reference.py > pymatgen_writer_reference.cif
"""
from pymatgen.core import Lattice, Structure
from pymatgen.io.cif import CifWriter

lattice = Lattice.from_parameters(5.1, 6.2, 7.3, 81.5, 95.25, 103.125)
species = ["O", "Li", "Fe", "P", "O", "O", "O"]
frac = [[0.1, 0.2, 0.3], [0, 0, 0], [0.5, 0.25, -0.125], [1.25, 0.75, 0.5], [0.9, 0.8, 0.7],
        [0.33333333333, 0.6666666667, 0.05], [0.123456789, 0.987654321, 0.5]]
s = Structure(lattice, species, frac, coords_are_cartesian=False, to_unit_cell=False)
print(CifWriter(s, significant_figures=16), end="")
