package surrogate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/crucible-sci/crucible/pkg/cgcnn"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// BandGapFunc predicts the band gap (eV) of a structure.
type BandGapFunc func(*crystal.Structure) (float64, error)

// Options configure Train. The zero value trains the property's model
// with default boosting parameters, 5 folds and seed 0.
type Options struct {
	// Params of the boosting (zero fields take TreeParams' defaults).
	Params TreeParams
	// Folds of the cross-validation (default 5).
	Folds int
	// Seed of the folds, the subsample and the trees.
	Seed uint64
	// MaxSamples, when positive, trains and validates on a random subset
	// of that many samples (for quick runs and tests).
	MaxSamples int
	// Groups replace the property's model feature groups.
	Groups []string
	// Ablation also cross-validates the model without each of its
	// feature groups in turn.
	Ablation bool
	// BandGap, for a model with the band gap as input, is the gap the
	// oracle gives a candidate that is not in the reference tables. The
	// model is trained with the data set's DFT gap; its cross-validation
	// is also scored with this gap in place of the DFT gap in the
	// held-out fold, and those residuals calibrate the uncertainty. Nil:
	// the CGCNN band-gap checkpoint of the data directory
	// (models/cgcnn/band-gap.pth.tar), as the oracle uses it.
	BandGap BandGapFunc
	// BandGapName names BandGap in the report ("" for the default).
	BandGapName string
	// TrainOnOracleGap trains with the oracle's gap (BandGap) instead of
	// the DFT gap, for comparison; the report's Model figures then use it
	// in the held-out folds too.
	TrainOnOracleGap bool
	// Quick skips what only the report needs: the random folds, the mean
	// predictor and the composition-only baseline, the ablations. The
	// grouped-fold cross-validation that calibrates the uncertainty and
	// the final fit are the same as in a full training, so the model
	// file is the same but for its report (Report.Quick).
	Quick bool
}

// Report is the cross-validation of a model, next to its baselines. All
// metrics are of out-of-fold predictions.
type Report struct {
	Property string `json:"property"`
	Unit     string `json:"unit"`
	// Data: file, checksum, rows, samples, rejected rows by reason code,
	// and how rows became samples.
	File     string         `json:"file"`
	SHA256   string         `json:"sha256"`
	Rows     int            `json:"rows"`
	Samples  int            `json:"samples"`
	Rejected map[string]int `json:"rejected,omitempty"`
	Notes    []string       `json:"notes,omitempty"`

	Folds          int      `json:"folds"`
	Seed           uint64   `json:"seed"`
	Groups         []string `json:"groups"`
	BaselineGroups []string `json:"baseline_groups"`

	// Random folds: the model, the mean predictor (the training folds'
	// mean of log10 y; its ρ is undefined and null) and the
	// composition-only baseline (the same trees on BaselineGroups).
	Model    Metrics `json:"model"`
	Mean     Metrics `json:"mean"`
	Baseline Metrics `json:"baseline"`
	// Grouped folds (Sample.Group kept together: polymorphs of one
	// formula, or the compositions and sources of one study).
	ModelGrouped    Metrics `json:"model_grouped"`
	MeanGrouped     Metrics `json:"mean_grouped"`
	BaselineGrouped Metrics `json:"baseline_grouped"`
	// GainLog10 is the baseline's MAE in log10 minus the model's, with a
	// 95 % paired-bootstrap interval (2,000 resamples of the samples).
	GainLog10 Interval `json:"gain_log10_vs_baseline"`
	// OracleGap, OracleGapGrouped: the model scored with the oracle's band
	// gap (BandGap) in the held-out folds, with OracleGapMAE that gap's MAE against the
	// DFT gap and OracleGapBelow the samples it puts under the model's
	// MinBandGap (they would be refused).
	OracleGap        *Metrics `json:"oracle_gap,omitempty"`
	OracleGapGrouped *Metrics `json:"oracle_gap_grouped,omitempty"`
	OracleGapName    string   `json:"oracle_gap_source,omitempty"`
	OracleGapMAE     float64  `json:"oracle_gap_mae,omitempty"`
	OracleGapBelow   int      `json:"oracle_gap_below_min,omitempty"`
	// Ablations: the model without one group.
	Ablations []Ablation `json:"ablations,omitempty"`
	// Quick: only the grouped folds of the model were cross-validated
	// (Options.Quick); the random-fold and baseline figures are absent.
	Quick bool `json:"quick,omitempty"`

	// Duration of Train (not stored in model files).
	Duration time.Duration `json:"-"`
}

// Interval is an estimate with a confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// Ablation is the model cross-validated without one feature group.
type Ablation struct {
	Without string  `json:"without"`
	Metrics Metrics `json:"metrics"`
}

// Train trains the surrogate of a property on its data set in the data
// directory dir and cross-validates it against the mean predictor and the
// composition-only baseline.
//
// Procedure (deterministic for a given Options.Seed):
//  1. Read the data set (LoadDataset); targets are log10 of the property.
//  2. Compute the model's and the baseline's features for every sample.
//  3. k-fold cross-validation (Folds, random assignment by Seed): the mean
//     predictor, the baseline and the model each fitted on k−1 folds and
//     scored on the held-out one; then the same with grouped folds.
//     Each tree fit holds out its own ValidFraction for early stopping,
//     so no held-out fold is ever seen while fitting.
//  4. For a model with the band gap as input, the held-out folds are also
//     predicted with the oracle's gap (Options.BandGap).
//  5. The uncertainty is calibrated on the out-of-fold residuals of the
//     grouped folds, with the oracle's gap when the model takes one: the
//     condition of a novel candidate.
//  6. The final model is fitted on all samples with the same procedure.
func Train(property, dir string, opt Options) (*Model, *Report, error) {
	start := time.Now()
	p, err := PropertyByName(property)
	if err != nil {
		return nil, nil, err
	}
	if opt.Folds == 0 {
		opt.Folds = 5
	}
	params := opt.Params.withDefaults()
	groups := p.Groups
	if opt.Groups != nil {
		groups = slices.Clone(opt.Groups)
	}
	featureNames, err := FeatureNames(groups)
	if err != nil {
		return nil, nil, err
	}
	usesGap := slices.Contains(groups, GroupBandGap)
	ds, err := LoadDataset(property, dir)
	if err != nil {
		return nil, nil, err
	}
	samples := ds.Samples
	if opt.MaxSamples > 0 && opt.MaxSamples < len(samples) {
		rng := rand.New(rand.NewPCG(opt.Seed, 0xda942042e4dd58b5))
		pick := rng.Perm(len(samples))[:opt.MaxSamples]
		slices.Sort(pick)
		sub := make([]Sample, len(pick))
		for i, k := range pick {
			sub[i] = samples[k]
		}
		samples = sub
	}
	n := len(samples)

	X, err := featurizeAll(samples, groups)
	if err != nil {
		return nil, nil, err
	}
	// The features with the oracle's band gap in place of the DFT gap.
	var Xo [][]float64
	var gapName string
	var gapMAE float64
	var gapBelow int
	gapFn := opt.BandGap
	if usesGap {
		gapName = opt.BandGapName
		if gapFn == nil {
			if gapFn, gapName, err = CGCNNBandGap(dir); err != nil {
				return nil, nil, fmt.Errorf("oracle band gap for %s: %w", property, err)
			}
		}
		if Xo, gapMAE, gapBelow, err = withOracleGap(samples, groups, gapFn, p.MinBandGap); err != nil {
			return nil, nil, err
		}
		if opt.TrainOnOracleGap {
			X = Xo
		}
	} else if opt.TrainOnOracleGap {
		return nil, nil, fmt.Errorf("%s: TrainOnOracleGap for a model without the band gap", property)
	}
	Xb, err := featurizeAll(samples, p.BaselineGroups)
	if err != nil {
		return nil, nil, err
	}
	y := make([]float64, n)
	truth := make([]float64, n)
	keys := make([]string, n)
	for i, s := range samples {
		y[i], truth[i], keys[i] = math.Log10(s.Target), s.Target, s.Group
	}

	rep := &Report{
		Property: property, Unit: p.Unit, File: ds.File, SHA256: ds.SHA256, Rows: ds.Rows, Samples: n,
		Notes: ds.Notes, Folds: opt.Folds, Seed: opt.Seed, Groups: groups, BaselineGroups: p.BaselineGroups,
	}
	if len(ds.Rejected) > 0 {
		rep.Rejected = map[string]int{}
		for _, r := range ds.Rejected {
			rep.Rejected[r.Code]++
		}
	}
	random, err := Folds(n, opt.Folds, opt.Seed, nil)
	if err != nil {
		return nil, nil, err
	}
	grouped, err := Folds(n, opt.Folds, opt.Seed, keys)
	if err != nil {
		return nil, nil, err
	}
	trees := TreeLearner(params)
	cv := func(X [][]float64, fold []int, learn Learner) ([]float64, error) {
		return CrossValidate(X, y, fold, learn, opt.Seed)
	}
	type cvRun struct {
		X     [][]float64
		fold  []int
		learn Learner
		dst   *Metrics
		keep  *[]float64
	}
	var predModel, predBase []float64
	runs := []cvRun{
		{Xb, random, MeanLearner, &rep.Mean, nil},
		{Xb, random, trees, &rep.Baseline, &predBase},
		{X, random, trees, &rep.Model, &predModel},
		{Xb, grouped, MeanLearner, &rep.MeanGrouped, nil},
		{Xb, grouped, trees, &rep.BaselineGrouped, nil},
		{X, grouped, trees, &rep.ModelGrouped, nil},
	}
	if opt.Quick {
		rep.Quick = true
		runs = runs[len(runs)-1:]
		if usesGap {
			// Calibrated below on the oracle's gap instead.
			runs = nil
		}
	}
	for _, run := range runs {
		pred, err := cv(run.X, run.fold, run.learn)
		if err != nil {
			return nil, nil, fmt.Errorf("cross-validate %s: %w", property, err)
		}
		*run.dst = ScoreLog(pred, truth)
		if run.keep != nil {
			*run.keep = pred
		}
	}
	// A constant predictor has no rank correlation (the out-of-fold
	// constants differ between folds, which gives a meaningless ρ).
	rep.Mean.Spearman, rep.MeanGrouped.Spearman = nil, nil
	if !opt.Quick {
		rep.GainLog10 = pairedGain(predBase, predModel, y, opt.Seed)
	}

	// Calibrate on grouped folds: a candidate is a formula (or for
	// conductivity a chemistry) the training set does not hold, which
	// random folds understate (polymorphs and doping series of one study
	// land on both sides).
	calib := rep.ModelGrouped
	basis := fmt.Sprintf("%d-fold cross-validation residuals, grouped folds (%s)", opt.Folds, groupedBy(property))
	gapSource := ""
	if usesGap {
		gapSource = "DFT (PBE) band gap of the data set"
		if opt.TrainOnOracleGap {
			gapSource = gapName
		}
		if !opt.Quick {
			pred, err := crossValidateOn(X, Xo, y, random, trees, opt.Seed)
			if err != nil {
				return nil, nil, fmt.Errorf("cross-validate %s with the oracle's gap: %w", property, err)
			}
			m := ScoreLog(pred, truth)
			rep.OracleGap = &m
		}
		pred, err := crossValidateOn(X, Xo, y, grouped, trees, opt.Seed)
		if err != nil {
			return nil, nil, fmt.Errorf("cross-validate %s with the oracle's gap: %w", property, err)
		}
		mg := ScoreLog(pred, truth)
		rep.OracleGapGrouped = &mg
		rep.OracleGapName, rep.OracleGapMAE, rep.OracleGapBelow = gapName, gapMAE, gapBelow
		calib = mg
		basis += " with the band gap of " + gapName + " in the held-out folds"
	}
	if opt.Ablation && !opt.Quick && len(groups) > 1 {
		for _, g := range groups {
			rest := slices.DeleteFunc(slices.Clone(groups), func(h string) bool { return h == g })
			Xa, err := featurizeAll(samples, rest)
			if err != nil {
				return nil, nil, err
			}
			if opt.TrainOnOracleGap && slices.Contains(rest, GroupBandGap) {
				if Xa, _, _, err = withOracleGap(samples, rest, gapFn, p.MinBandGap); err != nil {
					return nil, nil, err
				}
			}
			pred, err := cv(Xa, random, trees)
			if err != nil {
				return nil, nil, err
			}
			rep.Ablations = append(rep.Ablations, Ablation{Without: g, Metrics: ScoreLog(pred, truth)})
		}
	}

	params.Seed = opt.Seed
	ens, info, err := Fit(X, y, params)
	if err != nil {
		return nil, nil, fmt.Errorf("fit %s: %w", property, err)
	}
	m := &Model{
		Format: FormatName, Version: FormatVersion, DescriptorVersion: DescriptorVersion,
		Property: property, Unit: p.Unit, Description: p.Description, Target: "log10",
		Groups: groups, Features: featureNames,
		Training: Training{File: ds.File, SHA256: ds.SHA256, Rows: ds.Rows, Samples: n, Seed: opt.Seed,
			Params: params, Trees: info.Trees, BandGap: gapSource},
		Uncertainty: Calibration{Basis: basis, MAELog10: calib.MAELog10, Log10Q68: calib.AbsErrLog68, Log10Q95: calib.AbsErrLog95,
			MAE: calib.MAE, AbsQ68: calib.AbsErr68, AbsQ95: calib.AbsErr95},
		Ensemble: *ens,
	}
	if opt.MaxSamples > 0 && opt.MaxSamples < len(ds.Samples) {
		m.Training.Subset = n
	}
	if usesGap {
		m.Inputs, m.MinBandGap = []string{"band_gap"}, p.MinBandGap
	}
	if p.ZeroIfCentrosymmetric && slices.Contains(groups, GroupStructure) {
		m.ZeroIfCentrosymmetric, m.InversionTolerance = true, InversionTolerance
	}
	rep.Duration = time.Since(start)
	m.CV = *rep
	return m, rep, nil
}

// groupedBy says what grouped folds keep together for a property.
func groupedBy(property string) string {
	if property == "conductivity" {
		return "compositions linked by a common source kept together"
	}
	return "polymorphs of a formula kept together"
}

// featurizeAll computes the features of every sample.
func featurizeAll(samples []Sample, groups []string) ([][]float64, error) {
	X := make([][]float64, len(samples))
	for i, s := range samples {
		var err error
		X[i], err = Featurize(groups, Input{Structure: s.Structure, Composition: s.Composition, Properties: s.Properties})
		if err != nil {
			return nil, fmt.Errorf("descriptors of %s (%s): %w", s.ID, s.Formula, err)
		}
	}
	return X, nil
}

// withOracleGap recomputes the features with the band gap from gap
// instead of the data set's; it also returns that gap's MAE against the
// data set's and how many samples it puts below minGap.
func withOracleGap(samples []Sample, groups []string, gap BandGapFunc, minGap float64) ([][]float64, float64, int, error) {
	X := make([][]float64, len(samples))
	sum, below := 0.0, 0
	for i, s := range samples {
		g, err := gap(s.Structure)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("band gap of %s: %w", s.ID, err)
		}
		sum += math.Abs(g - s.Properties["band_gap"])
		if g < minGap {
			below++
		}
		props := map[string]float64{"band_gap": g}
		if X[i], err = Featurize(groups, Input{Structure: s.Structure, Composition: s.Composition, Properties: props}); err != nil {
			return nil, 0, 0, fmt.Errorf("descriptors of %s: %w", s.ID, err)
		}
	}
	return X, sum / float64(len(samples)), below, nil
}

// crossValidateOn is CrossValidate fitting on rows of train and
// predicting the held-out fold from the same rows of test.
func crossValidateOn(train, test [][]float64, y []float64, fold []int, learn Learner, seed uint64) ([]float64, error) {
	k := slices.Max(fold) + 1
	pred := make([]float64, len(y))
	for f := 0; f < k; f++ {
		var tx [][]float64
		var ty []float64
		for i := range y {
			if fold[i] != f {
				tx = append(tx, train[i])
				ty = append(ty, y[i])
			}
		}
		predict, err := learn(tx, ty, seed+uint64(f))
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f, err)
		}
		for i := range y {
			if fold[i] == f {
				pred[i] = predict(test[i])
			}
		}
	}
	return pred, nil
}

// pairedGain is the mean of |base − y| − |model − y| with a 95 %
// percentile-bootstrap interval over 2,000 resamples of the samples
// (Efron & Tibshirani, An Introduction to the Bootstrap (1993), ch. 13).
func pairedGain(base, model, y []float64, seed uint64) Interval {
	n := len(y)
	d := make([]float64, n)
	for i := range y {
		d[i] = math.Abs(base[i]-y[i]) - math.Abs(model[i]-y[i])
	}
	rng := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	const B = 2000
	means := make([]float64, B)
	for b := range means {
		s := 0.0
		for range n {
			s += d[rng.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	return Interval{Value: mean(d), Lo: Quantile(means, 0.025), Hi: Quantile(means, 0.975)}
}

// CGCNNBandGap returns the band gap of the CGCNN band-gap checkpoint in
// the data directory dir (models/cgcnn), the oracle's surrogate for
// candidates outside the reference tables, and a name for it with the
// checkpoint's SHA-256. The function is safe for concurrent use.
func CGCNNBandGap(dir string) (BandGapFunc, string, error) {
	cdir := filepath.Join(dir, "models", "cgcnn")
	path := filepath.Join(cdir, "band-gap.pth.tar")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	model, err := cgcnn.LoadCheckpoint(path)
	if err != nil {
		return nil, "", err
	}
	atoms, err := cgcnn.LoadAtomFeatures(filepath.Join(cdir, cgcnn.AtomInitFile))
	if err != nil {
		return nil, "", err
	}
	f := cgcnn.NewFeaturizer(atoms)
	f.Full = model.NeedsFullExpansion()
	var mu sync.Mutex
	var g cgcnn.Graph
	var ws cgcnn.Workspace
	fn := func(s *crystal.Structure) (float64, error) {
		mu.Lock()
		defer mu.Unlock()
		if err := f.Featurize(s, &g); err != nil {
			return 0, err
		}
		return model.Eval(&ws, &g)
	}
	return fn, "CGCNN band-gap checkpoint, sha256 " + hex.EncodeToString(sum[:]), nil
}
