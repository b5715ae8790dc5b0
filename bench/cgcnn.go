package bench

import _ "embed"

// CGCNNReference times the reference CGCNN inference (pymatgen structure
// loading and neighbour search, torch forward of the published
// checkpoints) on the golden structures (cgcnn_reference.py; run as
// "python3 - --data DIR [--repeat N]").
//
//go:embed cgcnn_reference.py
var CGCNNReference string
