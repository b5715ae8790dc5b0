// Package bench holds the scripts that "crucible bench" runs to time the
// reference implementations side by side with Crucible's own code. They are
// embedded in the binary, so a benchmark runs from any directory.
package bench

import _ "embed"

// HullPymatgen times pymatgen's PhaseDiagram on the golden hull systems
// (hull_pymatgen.py; run as "python3 - GOLDEN.json [REPEATS [cpu|wall]]").
//
//go:embed hull_pymatgen.py
var HullPymatgen string
