"""How often pymatgen's Composition.oxi_state_guesses() finds no
charge-balanced assignment for the Materials Project's stable compositions
(e_hull = 0 in $CRUCIBLE_DATA/data/mp_e_hull.csv), overall and per family,
the families of pkg/crystal's TestJudgeCompositionMaterialsProjectStable.

    nice -n 10 python3 tools/chemcompare/pymatgen_oxi.py [--every N] [--timeout S]

Takes every N-th stable composition (default 1: all). A composition whose
search takes longer than S seconds (default 10) is counted apart, as
neither accepted nor rejected. Needs pymatgen (Debian: python3-pymatgen).
"""
import argparse
import collections
import csv
import os
import signal
import sys
import time

from pymatgen.core import Composition, Element

METALLOIDS = {"B", "Si", "Ge", "As", "Sb", "Te"}
# Element.IsMetal in pkg/crystal: everything but H, the noble gases and these.
NONMETALS = {"H", "He", "Ne", "Ar", "Kr", "Xe", "Rn", "B", "C", "N", "O", "F", "Si", "P", "S",
             "Cl", "Ge", "As", "Se", "Br", "Sb", "Te", "I", "At"}


def family(comp):
    els = {e.symbol for e in comp.elements}
    nonmetals = els & NONMETALS
    has = lambda *s: bool(els & set(s))
    if not nonmetals:
        return "all-metal"
    if nonmetals == els:
        return "non-metals only"
    if has("F", "Cl", "Br", "I"):
        return "halides"
    if has("O"):
        return "oxides"
    if has("S", "Se"):
        return "chalcogenides"
    if has("C", "N"):
        return "carbides and nitrides"
    if nonmetals <= METALLOIDS:
        return "metal + B/Si/Ge/As/Sb/Te only"
    if has("P"):
        return "phosphides"
    if has("H"):
        return "hydrides"
    return "other"


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=10)
    args = ap.parse_args()
    path = os.path.join(os.environ["CRUCIBLE_DATA"], "data", "mp_e_hull.csv")
    with open(path) as f:
        stable = [r["formula"] for r in csv.DictReader(f) if float(r["target"]) == 0]
    sample = stable[:: args.every]
    signal.signal(signal.SIGALRM, on_alarm)
    rows = collections.defaultdict(lambda: [0, 0, 0])  # n, rejected, timed out
    start = time.time()
    for formula in sample:
        comp = Composition(formula)
        fam = family(comp)
        signal.alarm(args.timeout)
        try:
            rejected = len(comp.oxi_state_guesses()) == 0
            timed_out = False
        except Timeout:
            rejected, timed_out = False, True
        finally:
            signal.alarm(0)
        for key in (fam, "all"):
            rows[key][0] += 1
            rows[key][1] += rejected
            rows[key][2] += timed_out
    print(f"{len(sample)} of {len(stable)} stable compositions, {time.time() - start:.0f} s")
    print(f"{'family':31s} {'n':>6s} {'rejected':>8s} {'%':>7s} {'timed out':>9s}")
    for key in sorted(rows):
        n, bad, slow = rows[key]
        print(f"{key:31s} {n:6d} {bad:8d} {100 * bad / n:6.2f} % {slow:9d}")


if __name__ == "__main__":
    sys.exit(main())
