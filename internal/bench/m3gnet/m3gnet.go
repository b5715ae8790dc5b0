// Package m3gnet is the harness of "crucible bench m3gnet": the M3GNet
// potential's energy, forces and stress on a fixed set of real crystals,
// pkg/m3gnet and a plain PyTorch implementation of the same equations
// (bench/m3gnet_torch.py) side by side in one run, one thread each; the
// relaxations per core-hour on the golden cubic crystals; and the dense
// part's rate against the processor's peak.
package m3gnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crucible-sci/crucible/bench"
	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
	"github.com/crucible-sci/crucible/pkg/relax"
)

// Description is the command's help.
const Description = `Time the M3GNet universal potential: energy, forces and stress of the
golden Materials Project and ICSD structures of 8 to 100 atoms
(golden/cgcnn/cifs/mp-*, icsd-*; 16 crystals), on one thread, for Crucible
(pkg/m3gnet, float64) and for a plain PyTorch implementation of the same
equations (bench/m3gnet_torch.py, embedded; float64, and float32 as
matgl runs by default), in one run. Both include building the graph.
The PyTorch code is first checked against the golden energies of matgl's
tests and against Crucible's energies, forces and stress on the set.

Then the relaxations per core-hour: the conventional cells of the golden
cubic crystals (golden/m3gnet/cubic_lattice.json) relaxed from MP's
lattice constant with the default protocol (FIRE, Fréchet cell filter,
fmax 0.05 eV/Å, at most 500 steps), one thread. And the dense part: the
FLOPs of the network's dense products per pass over the set (forward,
and as many again for the backward pass), and the rate of the 64 × 64
kernel they run on, against the AVX2 FMA peak of one core.

--python names an interpreter with numpy and torch (default: python3,
else /usr/bin/python3); --no-torch skips the PyTorch runs.`

// Options configure a run.
type Options struct {
	DataDir string
	Python  string
	NoTorch bool
	MinTime time.Duration
}

// Result is a run's measurements.
type Result struct {
	structures []named
	atoms      int
	goRate     rate
	torch      []*torchRun
	agreement  agreement
	relaxed    relaxRate
	denseFLOPs float64 // per pass over the set, forward + backward
	kernel     rate    // the 64×64 kernel: structures holds its FLOPs
	cpu        cpuInfo
}

type named struct {
	name string
	st   *crystal.Structure
}

type rate struct {
	structures int
	wall, cpu  time.Duration
}

func (r rate) perSecond() float64 { return float64(r.structures) / r.wall.Seconds() }

// Run measures everything, in the order the output lists it.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.MinTime <= 0 {
		o.MinTime = 3 * time.Second
	}
	model, err := m3gnet.LoadData(o.DataDir)
	if err != nil {
		return nil, err
	}
	res := &Result{cpu: readCPU()}
	if res.structures, err = benchStructures(o.DataDir); err != nil {
		return nil, err
	}
	for _, s := range res.structures {
		res.atoms += s.st.NumSites()
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)

	goResults, err := res.timeGo(model, o.MinTime)
	if err != nil {
		return nil, err
	}
	if !o.NoTorch {
		for _, dtype := range []string{"float64", "float32"} {
			tr, err := runTorch(o, res.structures, dtype)
			if err != nil {
				return nil, err
			}
			res.torch = append(res.torch, tr)
			if dtype == "float64" {
				res.agreement = compare(goResults, tr.Results)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if res.relaxed, err = relaxCubic(ctx, model, o.DataDir); err != nil {
		return nil, err
	}
	res.denseFLOPs = denseFLOPs(model, res.structures)
	res.kernel = timeKernel(o.MinTime / 3)
	return res, nil
}

// timeKernel runs the dense kernel on 64-row blocks for at least d.
func timeKernel(d time.Duration) rate {
	var flops float64
	cpu0, _ := cputime.Process()
	start := time.Now()
	for flops == 0 || time.Since(start) < d {
		flops += m3gnet.DenseKernel(64, 1000)
	}
	wall := time.Since(start)
	cpu1, _ := cputime.Process()
	return rate{structures: int(flops), wall: wall, cpu: cpu1 - cpu0}
}

// benchStructures reads the fixed set: the golden MP and ICSD CIFs of 8
// to 100 atoms, by name.
func benchStructures(dataDir string) ([]named, error) {
	dir := filepath.Join(dataDir, "golden", "cgcnn", "cifs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("bench m3gnet: %w", err)
	}
	var out []named
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "mp-") && !strings.HasPrefix(name, "icsd-") {
			continue
		}
		st, err := crystal.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if n := st.NumSites(); n >= 8 && n <= 100 {
			out = append(out, named{name, st})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench m3gnet: no structures of 8–100 atoms in %s", dir)
	}
	return out, nil
}

// timeGo evaluates the set once (warming the workspace, and the values
// compared with PyTorch's), then times passes over it.
func (r *Result) timeGo(model *m3gnet.Model, minTime time.Duration) ([]m3gnet.Result, error) {
	calc := m3gnet.NewCalculator(model)
	systems := make([]*m3gnet.System, len(r.structures))
	first := make([]m3gnet.Result, len(r.structures))
	for i, s := range r.structures {
		systems[i] = m3gnet.FromStructure(s.st)
		if err := calc.Evaluate(systems[i], &first[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		first[i].Forces = append([]crystal.Vec3(nil), first[i].Forces...)
	}
	var res m3gnet.Result
	cpu0, _ := cputime.Process()
	start := time.Now()
	n := 0
	for n == 0 || time.Since(start) < minTime {
		for _, sys := range systems {
			if err := calc.Evaluate(sys, &res); err != nil {
				return nil, err
			}
		}
		n += len(systems)
	}
	wall := time.Since(start)
	cpu1, _ := cputime.Process()
	r.goRate = rate{structures: n, wall: wall, cpu: cpu1 - cpu0}
	return first, nil
}

// torchRun is the output of m3gnet_torch.py.
type torchRun struct {
	Implementation string  `json:"implementation"`
	DType          string  `json:"dtype"`
	Structures     int     `json:"structures"`
	Seconds        float64 `json:"seconds"`
	GraphSeconds   float64 `json:"graph_seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	Golden         []struct {
		Name      string  `json:"name"`
		Energy    float64 `json:"energy"`
		Want      float64 `json:"want"`
		Tolerance float64 `json:"tolerance"`
		OK        bool    `json:"ok"`
	} `json:"golden"`
	Results []torchResult `json:"results"`
}

// torchResult is the script's values for one structure.
type torchResult struct {
	Name   string        `json:"name"`
	Energy float64       `json:"energy"`
	Forces [][3]float64  `json:"forces"`
	Stress [3][3]float64 `json:"stress"`
}

func (t *torchRun) perSecond() float64 { return float64(t.Structures) / t.Seconds }

type torchStructure struct {
	Name    string         `json:"name"`
	Species []string       `json:"species"`
	Cell    [3][3]float64  `json:"cell"`
	Pos     []crystal.Vec3 `json:"pos"`
}

// runTorch runs the embedded script on the set with python.
func runTorch(o Options, sts []named, dtype string) (*torchRun, error) {
	in := make([]torchStructure, len(sts))
	for i, s := range sts {
		sys := m3gnet.FromStructure(s.st)
		in[i] = torchStructure{Name: s.name, Cell: sys.Cell, Pos: sys.Pos}
		for _, e := range sys.Species {
			in[i].Species = append(in[i].Species, e.Symbol())
		}
	}
	f, err := os.CreateTemp("", "crucible-bench-m3gnet-*.json")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if err := json.NewEncoder(f).Encode(in); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	python, err := findPython(o.Python)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, "-", "--model", filepath.Join(o.DataDir, m3gnet.DataPath),
		"--golden", filepath.Join(o.DataDir, "golden", "m3gnet", "energies.json"),
		"--structures", f.Name(), "--dtype", dtype,
		"--min-time", strconv.FormatFloat(o.MinTime.Seconds(), 'f', -1, 64))
	cmd.Stdin = strings.NewReader(bench.M3GNetTorch)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("bench m3gnet: %s: %w: %s", python, err, lastLines(stderr.String(), 5))
	}
	var tr torchRun
	if err := json.Unmarshal(stdout.Bytes(), &tr); err != nil {
		return nil, fmt.Errorf("bench m3gnet: reading the PyTorch script's output: %w", err)
	}
	if len(tr.Results) != len(sts) {
		return nil, fmt.Errorf("bench m3gnet: the PyTorch script returned %d results for %d structures", len(tr.Results), len(sts))
	}
	return &tr, nil
}

// findPython returns the first interpreter that imports torch: the one
// named, else /usr/bin/python3 (where Debian's python3-torch installs).
func findPython(name string) (string, error) {
	cands := []string{name}
	if name == "python3" {
		cands = append(cands, "/usr/bin/python3")
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import torch, numpy").Run() == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("bench m3gnet: no interpreter among %s imports torch and numpy; pass --python, or --no-torch", strings.Join(cands, ", "))
}

// agreement is the largest difference between Crucible's and PyTorch's
// float64 values on the set.
type agreement struct {
	energy, force, stress float64
}

func compare(goRes []m3gnet.Result, tr []torchResult) agreement {
	var a agreement
	for i, g := range goRes {
		t := tr[i]
		a.energy = math.Max(a.energy, math.Abs(g.Energy-t.Energy))
		for k, f := range g.Forces {
			for c := range 3 {
				a.force = math.Max(a.force, math.Abs(f[c]-t.Forces[k][c]))
			}
		}
		for r := range 3 {
			for c := range 3 {
				a.stress = math.Max(a.stress, math.Abs(g.Stress[r][c]-t.Stress[r][c]))
			}
		}
	}
	return a
}

// relaxRate is the cubic set's relaxations on one thread.
type relaxRate struct {
	rows, converged, steps int
	wall, cpu              time.Duration
}

func relaxCubic(ctx context.Context, model *m3gnet.Model, dataDir string) (relaxRate, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, "golden", "m3gnet", "cubic_lattice.json"))
	if err != nil {
		return relaxRate{}, fmt.Errorf("bench m3gnet: %w", err)
	}
	var table struct {
		Rows []struct {
			Material  string  `json:"material"`
			Structure string  `json:"structure"`
			AMP       float64 `json:"a_mp"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		return relaxRate{}, fmt.Errorf("bench m3gnet: cubic_lattice.json: %w", err)
	}
	var systems []*m3gnet.System
	for _, r := range table.Rows {
		sys, err := CubicCell(r.Material, r.Structure, r.AMP)
		if err != nil {
			return relaxRate{}, err
		}
		systems = append(systems, sys)
	}
	calc := m3gnet.NewCalculator(model)
	var out relaxRate
	cpu0, _ := cputime.Process()
	start := time.Now()
	for _, sys := range systems {
		r, err := relax.Relax(ctx, calc, sys, relax.Options{})
		if err != nil {
			return relaxRate{}, err
		}
		out.rows++
		out.steps += r.Steps
		if r.Converged {
			out.converged++
		}
	}
	out.wall = time.Since(start)
	cpu1, _ := cputime.Process()
	out.cpu = cpu1 - cpu0
	return out, nil
}

var symbolRE = regexp.MustCompile(`[A-Z][a-z]?`)

// CubicCell builds the conventional cubic cell of a row of
// cubic_lattice.json with lattice constant a: FCC (4 atoms), BCC (2),
// halite and zinc blende (8), caesium chloride (2), cubic perovskite ABX3
// (5). Off-stoichiometric names (HfC0.99) are built as the ideal compound.
func CubicCell(material, structure string, a float64) (*m3gnet.System, error) {
	var el []crystal.Element
	for _, s := range symbolRE.FindAllString(material, -1) {
		e, err := crystal.ElementBySymbol(s)
		if err != nil {
			return nil, err
		}
		el = append(el, e)
	}
	fcc := []crystal.Vec3{{0, 0, 0}, {0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}}
	sys := &m3gnet.System{Cell: [3][3]float64{{a, 0, 0}, {0, a, 0}, {0, 0, a}}, Periodic: true}
	add := func(e crystal.Element, shift crystal.Vec3, sites ...crystal.Vec3) {
		for _, s := range sites {
			sys.Species = append(sys.Species, e)
			sys.Pos = append(sys.Pos, s.Add(shift).Scale(a))
		}
	}
	switch {
	case len(el) == 1 && structure == "FCC":
		add(el[0], crystal.Vec3{}, fcc...)
	case len(el) == 1 && structure == "BCC":
		add(el[0], crystal.Vec3{}, crystal.Vec3{}, crystal.Vec3{0.5, 0.5, 0.5})
	case len(el) == 2 && (structure == "Halite" || structure == "Halite (FCC)"):
		add(el[0], crystal.Vec3{}, fcc...)
		add(el[1], crystal.Vec3{0.5, 0, 0}, fcc...)
	case len(el) == 2 && structure == "Zinc blende (FCC)":
		add(el[0], crystal.Vec3{}, fcc...)
		add(el[1], crystal.Vec3{0.25, 0.25, 0.25}, fcc...)
	case len(el) == 2 && structure == "Caesium chloride":
		add(el[0], crystal.Vec3{}, crystal.Vec3{})
		add(el[1], crystal.Vec3{}, crystal.Vec3{0.5, 0.5, 0.5})
	case len(el) == 3 && structure == "Cubic perovskite":
		add(el[0], crystal.Vec3{}, crystal.Vec3{})
		add(el[1], crystal.Vec3{}, crystal.Vec3{0.5, 0.5, 0.5})
		add(el[2], crystal.Vec3{}, crystal.Vec3{0.5, 0.5, 0}, crystal.Vec3{0.5, 0, 0.5}, crystal.Vec3{0, 0.5, 0.5})
	default:
		return nil, fmt.Errorf("bench m3gnet: no builder for %s (%s)", material, structure)
	}
	return sys, nil
}

// denseFLOPs counts the FLOPs of the network's dense products on the set:
// per structure of n atoms and b bonds (ordered pairs within the cutoff),
// as pkg/m3gnet evaluates them (multiply-adds × 2),
//
//	bond embedding              b·9·64
//	per block (× 3): atom gate  n·64·9, bond gated layer 2·b·9·64,
//	  per convolution (× 2)     4·n·64·64 (atom blocks of the first
//	                            layer and gate) + 2·b·64·64 (bond block)
//	                            + 4·b·64·64 (second and third layers and
//	                            gates) + b·9·64 (radial weight)
//	readout                     6·n·64·64 + 2·n·64,
//
// doubled for the backward pass (the input gradients, x̄ = Wᵀ ȳ, have
// the same multiply-adds; the weights need none).
func denseFLOPs(model *m3gnet.Model, sts []named) float64 {
	const d, k = 64.0, 9.0
	total := 0.0
	for _, s := range sts {
		nl, err := s.st.Neighbors(model.Cutoff())
		if err != nil {
			continue
		}
		n, b := float64(s.st.NumSites()), 0.0
		for i := range s.st.Species {
			b += float64(len(nl.Of(i)))
		}
		conv := 4*n*d*d + 2*b*d*d + 4*b*d*d + b*k*d
		macs := b*k*d + 3*(n*d*k+2*b*k*d+2*conv) + 6*n*d*d + 2*n*d
		total += 2 * 2 * macs
	}
	return total
}

// Write writes the result as text.
func (r *Result) Write(w io.Writer) error {
	fmt.Fprintf(w, "M3GNet energy + forces + stress, %d structures (%d atoms, 8–100 each), one thread; %s\n",
		len(r.structures), r.atoms, r.cpu)
	if steal, cpus, ok := cputime.Steal(); ok && steal > 0 {
		fmt.Fprintf(w, "the machine is shared: %.0f s of CPU time stolen from its %d CPUs since boot\n", steal.Seconds(), cpus)
	}
	for _, t := range r.torch {
		for _, g := range t.Golden {
			verdict := "ok"
			if !g.OK {
				verdict = "DISAGREES"
			}
			fmt.Fprintf(w, "PyTorch (%s) golden %s: %.6f eV, matgl %.6f ± %.0e: %s\n", t.DType, g.Name, g.Energy, g.Want, g.Tolerance, verdict)
		}
	}
	if len(r.torch) > 0 {
		a := r.agreement
		fmt.Fprintf(w, "Crucible vs PyTorch float64 on the set: max |ΔE| %.1e eV, |ΔF| %.1e eV/Å, |Δσ| %.1e GPa\n", a.energy, a.force, a.stress)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "rates per wall-clock second and per CPU-second of the process (on a loaded machine the second is the fairer)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tstructures/s\tCPU ms/structure\tgraph share\tCrucible × (wall)\tCrucible × (CPU)\t")
	goPS := r.goRate.perSecond()
	goCPU := r.goRate.cpu.Seconds() / float64(r.goRate.structures)
	fmt.Fprintf(tw, "Crucible (pkg/m3gnet, float64)\t%.2f\t%.1f\t\t\t\t\n", goPS, goCPU*1e3)
	for _, t := range r.torch {
		tCPU := t.CPUSeconds / float64(t.Structures)
		fmt.Fprintf(tw, "PyTorch (%s)\t%.2f\t%.1f\t%.0f%%\t%.1f×\t%.1f×\t\n", t.DType, t.perSecond(), tCPU*1e3,
			100*t.GraphSeconds/t.Seconds, goPS/t.perSecond(), tCPU/goCPU)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.torch) > 0 {
		fmt.Fprintf(w, "PyTorch: %s\n", r.torch[0].Implementation)
	}
	rl := r.relaxed
	perHour := float64(rl.rows) / rl.cpu.Hours()
	fmt.Fprintf(w, "\nrelaxations (FIRE + Fréchet cell filter, fmax 0.05 eV/Å, ≤ 500 steps) of the %d golden cubic cells from a_mp, one thread: %d converged, %.1f steps on average, %.1f s wall, %.1f s CPU: %.0f relaxations per core-hour (CPU time)\n",
		rl.rows, rl.converged, float64(rl.steps)/float64(rl.rows), rl.wall.Seconds(), rl.cpu.Seconds(), perHour)

	passCPU := goCPU * float64(len(r.structures))
	kernelCPU := float64(r.kernel.structures) / r.kernel.cpu.Seconds() / 1e9
	kernelWall := float64(r.kernel.structures) / r.kernel.wall.Seconds() / 1e9
	fmt.Fprintf(w, "\ndense part: %.1f MFLOP per pass over the set (forward and backward), %.0f ms of CPU per pass: %.1f GFLOP/s of dense products per CPU-second over the whole evaluation\n",
		r.denseFLOPs/1e6, passCPU*1e3, r.denseFLOPs/1e9/passCPU)
	fmt.Fprintf(w, "64×64 kernel alone, one thread: %.1f GFLOP/s per CPU-second (%.1f per wall-clock second), so about %.0f%% of the evaluation's CPU time is dense products\n",
		kernelCPU, kernelWall, 100*r.denseFLOPs/1e9/kernelCPU/passCPU)
	if r.cpu.Peak > 0 {
		fmt.Fprintf(w, "AVX2 FMA peak (16 FLOP/cycle) at the nominal %.0f MHz: %.1f GFLOP/s; the kernel reaches %.0f%%, the whole evaluation %.0f%%\n",
			r.cpu.MHz, r.cpu.Peak, 100*kernelCPU/r.cpu.Peak, 100*r.denseFLOPs/1e9/passCPU/r.cpu.Peak)
	}
	return nil
}

// cpuInfo describes the processor from /proc/cpuinfo, where there is one.
type cpuInfo struct{ cputime.CPU }

func (c cpuInfo) String() string {
	if c.Model == "" {
		return fmt.Sprintf("%d CPUs", runtime.NumCPU())
	}
	return fmt.Sprintf("CPU %s, %d cores at %.0f MHz", c.Model, runtime.NumCPU(), c.MHz)
}

func readCPU() cpuInfo { return cpuInfo{cputime.ReadCPU()} }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
