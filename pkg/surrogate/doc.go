// Package surrogate trains and runs Crucible's own property surrogates:
// gradient-boosted regression trees on composition and structure
// descriptors, for the properties no published checkpoint provides — the
// static dielectric constant κ (dielectric_constant), the largest
// longitudinal piezoelectric stress coefficient (piezo_max_eij, C/m²) and
// the electrical
// conductivity near room temperature (conductivity, S/cm) — and the
// estimate of the piezoelectric strain coefficient from them
// (EstimateDij).
//
// # Data
//
// Each property is trained on a data set in the data directory's data/
// folder (see Properties and LoadDataset): the DFPT dielectric tensors of
// Petousis et al. (2017), the DFPT piezoelectric tensors of de Jong et al.
// (2015), both with Materials Project structures, and the experimental
// ESTM thermoelectric measurements (Na & Chang 2022), of which rows
// measured between 280 and 320 K are kept and aggregated per composition
// by the median of log10 σ. Rows that cannot be used are rejected with a
// reason code, never dropped silently.
//
// # Model
//
// The target is log10 of the property (κ, |e| and σ span one, seven and
// eight decades). The features (Featurize) are Magpie-style statistics of
// elemental properties, descriptors of the structure (coordination,
// packing, odd moments of the bond directions, plasmon energy) and, for
// κ, the band gap. The learner (Fit) is gradient boosting of depth-limited
// regression trees with histogram splits, shrinkage, row and column
// subsampling and early stopping on held-out rows; it is deterministic
// for a seed.
//
// # Validation and uncertainty
//
// Train cross-validates the model (k-fold, random and grouped folds) next
// to the mean predictor and a composition-only baseline, reports MAE in
// the property's unit and in log10, and Spearman's ρ, and calibrates the
// uncertainty on the out-of-fold residuals (for κ with the band gap the
// oracle would supply, CGCNN's). The model file (Model, Save, Load) is
// versioned JSON carrying the property, unit, feature list, the training
// set's SHA-256, the cross-validation report, the calibration and the
// trees.
//
// The package is pure: it reads files but talks to no service.
package surrogate
