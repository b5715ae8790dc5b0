"""Time pymatgen's PhaseDiagram on the golden hull systems.

Run by `crucible bench hull --pymatgen`, which feeds this script to the
Python interpreter on standard input:

    python3 - GOLDEN.json [REPEATS [cpu|wall]]

For each system it builds PDEntry objects from the formation energies per
atom (not timed), then times (process CPU time by default, or wall-clock
time), REPEATS times over: building the PhaseDiagram,
get_decomp_and_e_above_hull(allow_negative=True) for every entry, and the
same for every query. It prints one JSON object with the median seconds of
each part per system, and the largest difference of its entries' energies
above the hull from the golden values, so that the run is checked as well
as timed. Exit status 3: pymatgen is not importable.
"""

import json
import statistics
import sys
import time

try:
    import pymatgen.core
    from pymatgen.analysis.phase_diagram import PDEntry, PhaseDiagram
    from pymatgen.core import Composition
except ImportError as exc:  # reported by the caller with the interpreter's path
    print(f"pymatgen is not importable by {sys.executable}: {exc}", file=sys.stderr)
    sys.exit(3)


def pd_entry(formula, e_form_per_atom, name=None):
    comp = Composition(formula)
    return PDEntry(comp, e_form_per_atom * comp.num_atoms, name=name)


def time_system(system, repeats, clock):
    entries = [pd_entry(e["formula"], e["e_form_per_atom"], e["id"]) for e in system["entries"]]
    queries = [pd_entry(q["formula"], q["e_form_per_atom"]) for q in system["queries"]]
    build, above, query = [], [], []
    worst = 0.0
    for _ in range(repeats):
        t0 = clock()
        pd = PhaseDiagram(entries)
        t1 = clock()
        e_above = [pd.get_decomp_and_e_above_hull(e, allow_negative=True)[1] for e in entries]
        t2 = clock()
        for q in queries:
            pd.get_decomp_and_e_above_hull(q, allow_negative=True)
        t3 = clock()
        build.append(t1 - t0)
        above.append(t2 - t1)
        query.append(t3 - t2)
        for e, got in zip(system["entries"], e_above):
            worst = max(worst, abs(got - system["results"][e["id"]]["e_above_hull"]))
    return {
        "elements": system["elements"],
        "build": statistics.median(build),
        "e_above_hull_all_entries": statistics.median(above),
        "queries": statistics.median(query),
        "max_diff": worst,
    }


def main():
    if len(sys.argv) < 2 or (len(sys.argv) > 3 and sys.argv[3] not in ("cpu", "wall")):
        print("usage: python3 - GOLDEN.json [REPEATS [cpu|wall]]", file=sys.stderr)
        sys.exit(2)
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    clock = time.perf_counter if len(sys.argv) > 3 and sys.argv[3] == "wall" else time.process_time
    with open(sys.argv[1], encoding="utf-8") as f:
        golden = json.load(f)
    out = {
        "pymatgen": pymatgen.core.__version__,
        "python": sys.version.split()[0],
        "repeats": repeats,
        "systems": [time_system(s, repeats, clock) for s in golden["systems"]],
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
