// Package predict times CGCNN inference, CIF file to the four main
// properties, in one thread and in parallel, checks the predictions
// against the golden values, and times the reference implementation
// (pymatgen + PyTorch, cgcnn_reference.py) in the same run. Description
// says how; `crucible bench predict` is its command line.
package predict

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"github.com/crucible-sci/crucible/pkg/cgcnn"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// referenceScript times the reference CGCNN inference (pymatgen structure
// loading and neighbour search, torch forward of the published
// checkpoints) on the golden structures; run as
// "python3 - --data DIR [--repeat N]".
//
//go:embed cgcnn_reference.py
var referenceScript string

// Description is what the benchmark measures and how (the command's help).
const Description = `Read each golden CGCNN structure from its CIF file and predict the four main
properties (formation energy, band gap, bulk and shear moduli) with the
published checkpoints, for at least --min-time per configuration:

  one thread          GOMAXPROCS=1, one structure after another;
  1 … --workers       goroutines each taking the next structure (GOMAXPROCS
                      raised to the number of workers if lower).

The forward passes alone, on featurised graphs, are timed too: the rate of
their dense products (matrix multiply-adds, counted as evaluated) is
compared with the processor's AVX2 FMA peak at the nominal clock. The
predictions are checked against the golden float64 values first.

With --reference, the reference implementation runs in the same invocation:
internal/bench/predict/cgcnn_reference.py (embedded) with the interpreter
--python, which needs torch and pymatgen: pymatgen structure loading and
neighbour search, torch forward on one CPU thread, the same checkpoints
read with torch.load.`

// properties are the checkpoints the evaluator scores with.
var properties = []string{"formation-energy-per-atom", "band-gap", "bulk-moduli", "shear-moduli"}

// Options configure a run.
type Options struct {
	// DataDir holds models/cgcnn and golden/cgcnn.
	DataDir string
	// MinTime is spent on each configuration.
	MinTime time.Duration
	// Workers is the largest number of goroutines timed (at least 1).
	Workers int
	// Reference also times the reference implementation with the
	// interpreter Python, which needs torch and pymatgen.
	Reference bool
	Python    string
}

// Run checks the predictions against the golden values, then times every
// configuration.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Workers < 1 {
		return nil, fmt.Errorf("--workers %d: must be at least 1", o.Workers)
	}
	b, err := newBench(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("%w (the data directory is --data, $CRUCIBLE_DATA or ~/.cache/crucible: fetch it with \"crucible data pull\")", err)
	}
	res, err := b.run(ctx, o.MinTime, o.Workers)
	if err != nil {
		return nil, err
	}
	if o.Reference {
		if res.reference, err = runReference(o.Python, o.DataDir, o.MinTime); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// bench holds what every configuration shares.
type bench struct {
	set      *cgcnn.Set
	paths    []string // golden CIF files
	atoms    int
	worstErr float64 // max |Δ| from the golden values
	compared int
	ties     int // of them, marked tie-ambiguous in the golden file
}

func newBench(dataDir string) (*bench, error) {
	set, err := cgcnn.LoadSet(filepath.Join(dataDir, "models", "cgcnn"), properties...)
	if err != nil {
		return nil, err
	}
	goldenDir := filepath.Join(dataDir, "golden", "cgcnn")
	raw, err := os.ReadFile(filepath.Join(goldenDir, "predictions.json"))
	if err != nil {
		return nil, err
	}
	var golden struct {
		Structures map[string]struct {
			Ambiguous bool               `json:"truncation_tie_ambiguous"`
			Float64   map[string]float64 `json:"predictions_float64"`
		} `json:"structures"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		return nil, fmt.Errorf("golden predictions: %w", err)
	}
	names := make([]string, 0, len(golden.Structures))
	for name := range golden.Structures {
		names = append(names, name)
	}
	sort.Strings(names)
	b := &bench{set: set}
	structs := make([]*crystal.Structure, len(names))
	for i, name := range names {
		b.paths = append(b.paths, filepath.Join(goldenDir, "cifs", name))
		if structs[i], err = crystal.ReadFile(b.paths[i]); err != nil {
			return nil, err
		}
		b.atoms += structs[i].NumSites()
	}
	preds, err := set.Predict(context.Background(), structs)
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		g := golden.Structures[name]
		if preds[i].Err != nil {
			return nil, fmt.Errorf("%s: %w", name, preds[i].Err)
		}
		if g.Ambiguous {
			// Crucible averages over neighbours tied at the cut where the
			// reference keeps whichever its neighbour search lists first
			// (cgcnn.TieTolerance): these values differ by design.
			b.ties++
			continue
		}
		b.compared++
		for m, model := range set.Models() {
			want, ok := g.Float64[model.Name]
			if !ok {
				return nil, fmt.Errorf("golden predictions: %s has no %s", name, model.Name)
			}
			b.worstErr = math.Max(b.worstErr, math.Abs(preds[i].Values[m]-want))
		}
	}
	return b, nil
}

// rate is the throughput of one configuration.
type rate struct {
	label      string
	procs      int
	structures int
	wall       time.Duration
	cpu        time.Duration
}

func (r rate) perSecond() float64 { return float64(r.structures) / r.wall.Seconds() }

// Result is what a run measured.
type Result struct {
	bench      *bench
	rates      []rate        // one thread, then 1 … workers
	dense      cgcnn.Cost    // per pass over the golden structures
	denseTime  time.Duration // forward passes only, per pass
	cpu        cpuInfo
	reference  *referenceRun
	maxWorkers int
}

func (b *bench) run(ctx context.Context, minTime time.Duration, workers int) (*Result, error) {
	res := &Result{bench: b, cpu: readCPU(), maxWorkers: workers}
	saved := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(saved)

	runtime.GOMAXPROCS(1)
	r, err := b.timeWorkers(ctx, 1, minTime)
	if err != nil {
		return nil, err
	}
	r.label = "crucible, one thread"
	res.rates = append(res.rates, r)

	if err := b.timeDense(res, minTime); err != nil {
		return nil, err
	}

	for w := 1; w <= workers; w++ {
		runtime.GOMAXPROCS(max(saved, w))
		r, err := b.timeWorkers(ctx, w, minTime)
		if err != nil {
			return nil, err
		}
		r.label = fmt.Sprintf("crucible, %d workers", w)
		if w == 1 {
			r.label = "crucible, 1 worker"
		}
		res.rates = append(res.rates, r)
	}
	return res, nil
}

// timeWorkers runs workers goroutines, each reading the next CIF and
// predicting the four properties, until minTime has passed.
func (b *bench) timeWorkers(ctx context.Context, workers int, minTime time.Duration) (rate, error) {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	cpu0, _ := cputime.Process()
	start := time.Now()
	deadline := start.Add(minTime)
	for range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				path := b.paths[int(next.Add(1)-1)%len(b.paths)]
				s, err := crystal.ReadFile(path)
				if err == nil {
					var preds []cgcnn.Prediction
					preds, err = b.set.Predict(ctx, []*crystal.Structure{s})
					if err == nil {
						err = preds[0].Err
					}
				}
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("%s: %w", path, err) })
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return rate{}, firstErr
	}
	// Structures started before the deadline all finished.
	cpu1, _ := cputime.Process()
	return rate{procs: runtime.GOMAXPROCS(0), structures: int(next.Load()), wall: wall, cpu: cpu1 - cpu0}, nil
}

// timeDense times the forward passes alone, on featurised graphs, in one
// thread (GOMAXPROCS is 1 here).
func (b *bench) timeDense(res *Result, minTime time.Duration) error {
	f := cgcnn.NewFeaturizer(b.set.AtomFeatures())
	graphs := make([]*cgcnn.Graph, len(b.paths))
	for i, path := range b.paths {
		s, err := crystal.ReadFile(path)
		if err != nil {
			return err
		}
		graphs[i] = new(cgcnn.Graph)
		if err := f.Featurize(s, graphs[i]); err != nil {
			return err
		}
		for _, m := range b.set.Models() {
			c := m.Cost(graphs[i])
			res.dense.DenseFLOPs += c.DenseFLOPs
			res.dense.ReferenceFLOPs += c.ReferenceFLOPs
			res.dense.Activations += c.Activations
		}
	}
	var ws cgcnn.Workspace
	passes := 0
	start := time.Now()
	for passes == 0 || time.Since(start) < minTime {
		for _, g := range graphs {
			for _, m := range b.set.Models() {
				if _, err := m.Eval(&ws, g); err != nil {
					return err
				}
			}
		}
		passes++
	}
	res.denseTime = time.Since(start) / time.Duration(passes)
	return nil
}

// referenceRun is the output of cgcnn_reference.py.
type referenceRun struct {
	Implementation string             `json:"implementation"`
	Structures     int                `json:"structures"`
	Seconds        float64            `json:"seconds"`
	CPUSeconds     float64            `json:"cpu_seconds"`
	PerSecond      float64            `json:"structures_per_second"`
	MaxAbsError    map[string]float64 `json:"max_abs_error"`
	GoldenOK       bool               `json:"golden_ok"`
	Failures       []string           `json:"failures"`
}

// runReference runs the embedded reference script with the
// interpreter python, which reads it on standard input.
func runReference(python, dataDir string, minTime time.Duration) (*referenceRun, error) {
	cmd := exec.Command(python, "-", "--data", dataDir, "--repeat", "1",
		"--min-time", strconv.FormatFloat(minTime.Seconds(), 'f', -1, 64))
	cmd.Stdin = strings.NewReader(referenceScript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return nil, fmt.Errorf("--reference: %s; pass --python with an interpreter that has them",
			strings.TrimSpace(stderr.String()))
	case errors.As(err, &ee) && ee.ExitCode() == 1 && stdout.Len() > 0:
		// The script ran, but its predictions disagree with the golden
		// values: report that below rather than fail.
	case err != nil:
		return nil, fmt.Errorf("--reference: %s: %w: %s", python, err, lastLines(stderr.String(), 5))
	}
	var ref referenceRun
	if err := json.Unmarshal(stdout.Bytes(), &ref); err != nil {
		return nil, fmt.Errorf("--reference: reading the script's output: %w", err)
	}
	return &ref, nil
}

// Write writes the result as text: the check against the golden values,
// the rate of every configuration, the reference's, and the dense part's
// rate against the processor's peak.
func (r *Result) Write(w io.Writer) error {
	b := r.bench
	fmt.Fprintf(w, "CGCNN inference, CIF file → %s\n", strings.Join(properties, ", "))
	fmt.Fprintf(w, "%d golden structures (%d atoms); kernels: %s; %s\n", len(b.paths), b.atoms, cgcnn.Kernels(), r.cpu)
	fmt.Fprintf(w, "check: max |Δ| from the golden float64 predictions %.1e over %d structures (%d tie-ambiguous ones averaged over their tied neighbours, not compared)\n\n",
		b.worstErr, b.compared, b.ties)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tGOMAXPROCS\tstructures/s\tµs/structure\tCPU µs/structure\tscaling\t")
	var oneWorker float64
	for i, rate := range r.rates {
		scaling := ""
		switch {
		case i == 1:
			oneWorker = rate.perSecond()
		case i > 1:
			scaling = fmt.Sprintf("%.2f×", rate.perSecond()/oneWorker)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.0f\t%s\t\n", rate.label, rate.procs, rate.perSecond(),
			1e6/rate.perSecond(), rate.cpu.Seconds()*1e6/float64(rate.structures), scaling)
	}
	if ref := r.reference; ref != nil {
		fmt.Fprintf(tw, "reference, one thread\t1\t%.1f\t%.0f\t%.0f\t\t\n", ref.PerSecond, 1e6/ref.PerSecond,
			ref.CPUSeconds*1e6/float64(ref.Structures))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if ref := r.reference; ref != nil {
		fmt.Fprintf(w, "\nreference: %s\n", ref.Implementation)
		if !ref.GoldenOK {
			fmt.Fprintf(w, "reference predictions DISAGREE with the golden values: %s\n", strings.Join(ref.Failures, "; "))
		}
		fmt.Fprintf(w, "crucible is %.1f× the reference's throughput on one thread\n", r.rates[0].perSecond()/ref.PerSecond)
	}

	perPass := r.denseTime.Seconds()
	rate := r.dense.DenseFLOPs / perPass / 1e9
	fmt.Fprintf(w, "\ndense part, per pass over the %d structures × %d models: %.1f MFLOP as evaluated (%.1f MFLOP in the reference's formulation), %.0f k activations\n",
		len(b.paths), len(properties), r.dense.DenseFLOPs/1e6, r.dense.ReferenceFLOPs/1e6, r.dense.Activations/1e3)
	fmt.Fprintf(w, "forward passes on featurised graphs, one thread: %.2f ms per pass, %.1f GFLOP/s of dense products (the time includes the activations)",
		perPass*1e3, rate)
	fmt.Fprintln(w)
	if r.cpu.Peak > 0 {
		boost := r.cpu.measuredGHz * cputime.FlopsPerCycleAVX2
		fmt.Fprintf(w, "AVX2 FMA peak (16 FLOP/cycle): %.1f GFLOP/s at the nominal %.0f MHz (%.0f%% reached), %.1f GFLOP/s at the %.2f GHz measured while busy (%.0f%%)\n",
			r.cpu.Peak, r.cpu.MHz, 100*rate/r.cpu.Peak, boost, r.cpu.measuredGHz, 100*rate/boost)
	}
	return nil
}

// cpuInfo describes the processor from /proc/cpuinfo, where there is one.
type cpuInfo struct {
	cputime.CPU
	measuredGHz float64 // clock while busy (boost), from measureClock
}

func (c cpuInfo) String() string {
	if c.Model == "" {
		return fmt.Sprintf("%d CPUs", runtime.NumCPU())
	}
	s := fmt.Sprintf("CPU %s, %d cores at %.0f MHz", c.Model, c.Cores, c.MHz)
	if c.AVX2 {
		s += " with AVX2+FMA"
	}
	return s
}

func readCPU() cpuInfo {
	c := cpuInfo{CPU: cputime.ReadCPU()}
	c.measuredGHz = measureClock()
	return c
}

// measureClock estimates the clock of a busy core (which boosts
// above the nominal frequency of /proc/cpuinfo) from a chain of dependent
// one-cycle integer operations: each iteration of clockChain is an
// exclusive-or and an addition, both on the chain, so two cycles.
func measureClock() float64 {
	const n = 100_000_000
	best := math.Inf(1)
	for range 3 {
		start := time.Now()
		clockSink = clockChain(n)
		best = math.Min(best, time.Since(start).Seconds())
	}
	return 2 * n / best / 1e9
}

var clockSink int

//go:noinline
func clockChain(n int) int {
	x := 1
	for i := 0; i < n; i++ {
		x += i ^ x
	}
	return x
}

// lastLines returns the last n lines of s, for error messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
