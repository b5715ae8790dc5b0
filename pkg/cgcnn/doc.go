// Package cgcnn runs the published Crystal Graph Convolutional Neural
// Network checkpoints (Xie & Grossman, "Crystal Graph Convolutional Neural
// Networks for an Accurate and Interpretable Prediction of Material
// Properties", PRL 120, 145301 (2018); code txie-93/cgcnn) natively, in
// float64, without Python or PyTorch.
//
// The checkpoints are read as published: LoadCheckpoint decodes the legacy
// torch.save format of the .pth.tar files (with gopickle) and takes the
// state_dict, the normaliser and the hyper-parameters from them. A
// Featurizer builds the crystal graph as CGCNN's CIFData does
// (atom_init.json features, 12 nearest neighbours within 8 Å padded with
// index 0 at 9 Å, 41 Gaussians), and Model.Eval evaluates the network as
// CrystalGraphConvNet does in inference mode. A Set evaluates several
// checkpoints on one featurisation per structure, for batches, from any
// number of goroutines.
//
// One thing differs from the original code, by design: where several
// neighbours of an atom are at the distance of its twelfth, CGCNN keeps
// those its sort happens to put first, which depends on the orientation of
// the cell, the order of the sites and rounding, so that the same crystal
// written down differently gets different predictions (up to 0.5 eV in
// efermi on the golden perovskites).
// The featuriser gives tied neighbours equal weights that fill the last
// slots instead, and interpolates between that and the plain cut for
// near-ties, a rule that depends on the distances alone (TieTolerance);
// predictions are then the same, to about 1e-12 (relative; 1e-10 where a
// near-tie lies on the interpolation's ramp), however the crystal is
// rotated, translated, ordered or written to a file and read back. How
// much the choice among tied neighbours could move a prediction is
// reported beside it (Set.PredictWithTieSpread). Structures without such
// ties, and with Featurizer.ReferenceTies every structure, agree with the
// original code run in float64 to about 1e-13 (absolute, in the model's
// units) on all the golden structures; ReferenceTies reproduces the
// reference's choice among tied neighbours (crystal.TiesAsPymatgen), exact
// for cells whose lattice matrix is pymatgen's to the bit, which includes
// every cell with right angles read from a CIF.
//
// Speed comes from evaluating the same function with less arithmetic (the
// first layer of each convolution split into per-atom and per-edge blocks,
// batch norm folded into the weights, each edge's Gaussian expansion cut to
// the window where it is not negligible) and from AVX2/FMA kernels for the
// products and the activations, with portable Go versions elsewhere.
package cgcnn
