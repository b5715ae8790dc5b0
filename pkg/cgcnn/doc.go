// Package cgcnn runs the published Crystal Graph Convolutional Neural
// Network checkpoints (Xie & Grossman, "Crystal Graph Convolutional Neural
// Networks for an Accurate and Interpretable Prediction of Material
// Properties", PRL 120, 145301 (2018); code txie-93/cgcnn) natively, in
// float64, without Python or PyTorch.
//
// The checkpoints are read as published: LoadCheckpoint decodes the legacy
// torch.save format of the .pth.tar files (with gopickle) and takes the
// state_dict, the normaliser and the hyper-parameters from them. A
// Featurizer builds the crystal graph exactly as CGCNN's CIFData does
// (atom_init.json features, 12 nearest neighbours within 8 Å padded with
// index 0 at 9 Å, 41 Gaussians), and Model.Eval evaluates the network as
// CrystalGraphConvNet does in inference mode. A Set evaluates several
// checkpoints on one featurisation per structure, for batches, from any
// number of goroutines.
//
// The results agree with the original code run in float64 to about 1e-13
// (absolute, in the model's units) on all the golden structures. Where some
// atom's 12th and 13th neighbours are equidistant, which of them CGCNN
// keeps follows from the rounding in pymatgen's neighbour search and the
// order it lists neighbours in; the featuriser reproduces both
// (crystal.TiesAsPymatgen). That is exact for cells whose lattice matrix
// is pymatgen's to the bit, which includes every cell with right angles
// read from a CIF; for other angles numpy's vectorised trigonometry rounds
// differently on different CPUs, so there the reference's own choice is
// machine-dependent and ties are broken by pymatgen's order of a matrix
// computed with Go's trigonometry.
//
// Speed comes from evaluating the same function with less arithmetic (the
// first layer of each convolution split into per-atom and per-edge blocks,
// batch norm folded into the weights, each edge's Gaussian expansion cut to
// the window where it is not negligible) and from AVX2/FMA kernels for the
// products and the activations, with portable Go versions elsewhere.
package cgcnn
