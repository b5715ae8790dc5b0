// Package hull times phase diagrams, Crucible's against pymatgen's, on
// the golden systems: build each diagram and compute the energy above the
// hull of every entry and query, and check the entries' values against
// the golden ones. pymatgen's time comes from the golden file, or from
// hull_pymatgen.py run in the same invocation. Description says how;
// `crucible bench hull` is its command line.
package hull

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
)

// pymatgenScript times pymatgen's PhaseDiagram on the golden hull systems;
// run as "python3 - GOLDEN.json [REPEATS [cpu|wall]]".
//
//go:embed hull_pymatgen.py
var pymatgenScript string

// Description is what the benchmark measures and how (the command's help).
const Description = `Build each phase diagram of the golden file and compute the energy above the
hull of every entry and every query, repeated for at least --min-time per
system (the median repetition is reported), and compare with pymatgen's time
for the same systems: the time recorded in the golden file (build and every
entry, no queries) and, with --pymatgen, pymatgen run now by the Python
interpreter --python (build, every entry and every query, the median of
--repeats runs). The largest difference of the entries' energies above the
hull from the golden values is reported as a check.

Times are process CPU time (user + system), so that other work on a shared
machine does not count; --wall measures wall-clock time instead, for both.`

// Options configure a run.
type Options struct {
	// Golden is golden/hull/phase_diagrams.json.
	Golden string
	// MinTime is spent repeating each system.
	MinTime time.Duration
	// Wall measures wall-clock time instead of process CPU time.
	Wall bool
	// Pymatgen also runs pymatgen now with the interpreter Python, the
	// median of Repeats runs per system.
	Pymatgen bool
	Python   string
	Repeats  int
}

// Result is what a run measured.
type Result struct {
	rows  []row
	clock clock
	live  *pymatgenRun
}

// Run times every golden system (and pymatgen on them, with Pymatgen).
func Run(o Options) (*Result, error) {
	systems, err := readGolden(o.Golden)
	if err != nil {
		return nil, err
	}
	res := &Result{clock: newClock(o.Wall), rows: make([]row, len(systems))}
	if o.Pymatgen {
		if res.live, err = runPymatgen(o.Python, o.Golden, o.Repeats, res.clock, len(systems)); err != nil {
			return nil, err
		}
	}
	for i, s := range systems {
		if res.rows[i], err = timeSystem(s, res.clock, o.MinTime); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name(), err)
		}
		if res.live != nil {
			p := res.live.Systems[i]
			res.rows[i].live = p.Build + p.EAboveHull + p.Queries
		}
	}
	return res, nil
}

// goldenSystem is one system of golden/hull/phase_diagrams.json, parsed.
type goldenSystem struct {
	Elements []string `json:"elements"`
	Entries  []struct {
		ID      string  `json:"id"`
		Formula string  `json:"formula"`
		EForm   float64 `json:"e_form_per_atom"`
	} `json:"entries"`
	Results map[string]struct {
		EAboveHull float64 `json:"e_above_hull"`
	} `json:"results"`
	Queries []struct {
		Formula string  `json:"formula"`
		EForm   float64 `json:"e_form_per_atom"`
	} `json:"queries"`
	Pymatgen struct {
		Build      float64 `json:"build"`
		EAboveHull float64 `json:"e_above_hull_all_entries"`
	} `json:"pymatgen_seconds"`

	entries []hull.Entry
	queries []crystal.Composition
}

func (s *goldenSystem) name() string { return strings.Join(s.Elements, "-") }

func readGolden(path string) ([]*goldenSystem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("golden file: %w (set --golden or CRUCIBLE_DATA)", err)
	}
	var g struct {
		Systems []*goldenSystem `json:"systems"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(g.Systems) == 0 {
		return nil, fmt.Errorf("%s: no systems", path)
	}
	for _, s := range g.Systems {
		for _, e := range s.Entries {
			c, err := crystal.ParseFormula(e.Formula)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: entry %s: %w", path, s.name(), e.ID, err)
			}
			s.entries = append(s.entries, hull.Entry{ID: e.ID, Composition: c, EnergyPerAtom: e.EForm})
		}
		for i, q := range s.Queries {
			c, err := crystal.ParseFormula(q.Formula)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: query %d: %w", path, s.name(), i, err)
			}
			s.queries = append(s.queries, c)
		}
	}
	return g.Systems, nil
}

type row struct {
	system       *goldenSystem
	stable       int
	goTime       time.Duration // build + every entry + every query, median
	reps         int
	golden, live float64 // pymatgen seconds: golden file; this run (0: not run)
	maxDiff      float64 // largest |e_above_hull − golden| over the entries
}

// clock measures the time of n repetitions of a benchmark: process CPU
// time where the system reports it, wall-clock time otherwise.
type clock struct{ cpu bool }

func newClock(wall bool) clock {
	_, ok := cputime.Process()
	return clock{cpu: ok && !wall}
}

func (c clock) name() string {
	if c.cpu {
		return "CPU time"
	}
	return "wall-clock time"
}

func (c clock) measure(n int, run func() error) (time.Duration, error) {
	t0, c0 := time.Now(), time.Duration(0)
	if c.cpu {
		c0, _ = cputime.Process()
	}
	for i := 0; i < n; i++ {
		if err := run(); err != nil {
			return 0, err
		}
	}
	if c.cpu {
		c1, _ := cputime.Process()
		return c1 - c0, nil
	}
	return time.Since(t0), nil
}

// timeSystem builds the diagram and computes every entry's and query's
// energy above the hull, in batches of repetitions long enough (10 ms) for
// the clock's resolution, until minTime has passed and at least 5 batches
// have run; it reports the median time of one repetition.
func timeSystem(s *goldenSystem, clk clock, minTime time.Duration) (row, error) {
	row := row{system: s, golden: s.Pymatgen.Build + s.Pymatgen.EAboveHull}
	run := func() error {
		d, err := hull.New(s.entries)
		if err != nil {
			return err
		}
		if _, err := d.Results(); err != nil {
			return err
		}
		for i, c := range s.queries {
			if _, err := d.Query(c, s.Queries[i].EForm); err != nil {
				return err
			}
		}
		return nil
	}
	// Check the results once, outside the timing.
	d, err := hull.New(s.entries)
	if err != nil {
		return row, err
	}
	results, err := d.Results()
	if err != nil {
		return row, err
	}
	row.stable = len(d.Stable())
	for _, r := range results {
		if want, ok := s.Results[r.ID]; ok {
			row.maxDiff = math.Max(row.maxDiff, math.Abs(r.EAboveHull-want.EAboveHull))
		}
	}

	n := 1
	for {
		dt, err := clk.measure(n, run)
		if err != nil {
			return row, err
		}
		if dt >= 10*time.Millisecond || n >= 1<<20 {
			break
		}
		n *= 2
	}
	var perRep []time.Duration
	var total time.Duration
	for len(perRep) < 5 || total < minTime {
		dt, err := clk.measure(n, run)
		if err != nil {
			return row, err
		}
		total += dt
		perRep = append(perRep, dt/time.Duration(n))
	}
	slices.Sort(perRep)
	row.goTime, row.reps = perRep[len(perRep)/2], len(perRep)*n
	return row, nil
}

// pymatgenRun is the output of hull_pymatgen.py.
type pymatgenRun struct {
	Pymatgen string `json:"pymatgen"`
	Python   string `json:"python"`
	Repeats  int    `json:"repeats"`
	Systems  []struct {
		Elements   []string `json:"elements"`
		Build      float64  `json:"build"`
		EAboveHull float64  `json:"e_above_hull_all_entries"`
		Queries    float64  `json:"queries"`
		MaxDiff    float64  `json:"max_diff"`
	} `json:"systems"`
}

// runPymatgen runs the embedded pymatgen script with the interpreter
// python, which reads it on standard input.
func runPymatgen(python, goldenPath string, repeats int, clk clock, systems int) (*pymatgenRun, error) {
	if repeats < 1 {
		return nil, fmt.Errorf("--repeats %d: must be at least 1", repeats)
	}
	clockArg := "wall"
	if clk.cpu {
		clockArg = "cpu"
	}
	cmd := exec.Command(python, "-", goldenPath, strconv.Itoa(repeats), clockArg)
	cmd.Stdin = strings.NewReader(pymatgenScript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return nil, fmt.Errorf("--pymatgen: %s; pass --python with an interpreter that has pymatgen",
			strings.TrimSpace(stderr.String()))
	case err != nil:
		return nil, fmt.Errorf("--pymatgen: %s: %w: %s", python, err, strings.TrimSpace(stderr.String()))
	}
	var run pymatgenRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		return nil, fmt.Errorf("--pymatgen: reading the script's output: %w", err)
	}
	if len(run.Systems) != systems {
		return nil, fmt.Errorf("--pymatgen: %d systems timed, want %d", len(run.Systems), systems)
	}
	return &run, nil
}

// Write writes the result as a table, one row per system and their total,
// with the ratios of pymatgen's time to Crucible's.
func (res *Result) Write(w io.Writer) error {
	rows, clk, live := res.rows, res.clock, res.live
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "system\tentries\tqueries\tstable\tcrucible\tpymatgen (golden)\tratio"
	if live != nil {
		header += "\tpymatgen (now)\tratio (now)"
	}
	fmt.Fprintln(tw, header+"\tmax |Δ e_above_hull|\t")
	var goTotal time.Duration
	var goldenTotal, liveTotal, worst float64
	minRatio, minLive := math.Inf(1), math.Inf(1)
	for _, r := range rows {
		goSec := r.goTime.Seconds()
		goTotal += r.goTime
		goldenTotal += r.golden
		liveTotal += r.live
		worst = math.Max(worst, r.maxDiff)
		minRatio = math.Min(minRatio, r.golden/goSec)
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t%s\t%s\t%.0f×", r.system.name(), len(r.system.entries),
			len(r.system.queries), r.stable, seconds(goSec), seconds(r.golden), r.golden/goSec)
		if live != nil {
			minLive = math.Min(minLive, r.live/goSec)
			line += fmt.Sprintf("\t%s\t%.0f×", seconds(r.live), r.live/goSec)
		}
		fmt.Fprintf(tw, "%s\t%.1e\t\n", line, r.maxDiff)
	}
	line := fmt.Sprintf("total\t\t\t\t%s\t%s\t%.0f×", seconds(goTotal.Seconds()), seconds(goldenTotal), goldenTotal/goTotal.Seconds())
	if live != nil {
		line += fmt.Sprintf("\t%s\t%.0f×", seconds(liveTotal), liveTotal/goTotal.Seconds())
	}
	fmt.Fprintf(tw, "%s\t%.1e\t\n", line, worst)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ncrucible: build + e_above_hull of every entry and query, %s, median of repeated runs.\n", clk.name())
	fmt.Fprintf(w, "pymatgen (golden): build + e_above_hull of every entry, from the golden file. Least ratio: %.0f×.\n", minRatio)
	if live != nil {
		fmt.Fprintf(w, "pymatgen (now): %s on Python %s, build + every entry and query, %s, median of %d runs. Least ratio: %.0f×.\n",
			live.Pymatgen, live.Python, clk.name(), live.Repeats, minLive)
	}
	return nil
}

// seconds writes a duration in seconds with a unit that keeps it short.
func seconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.2f ms", s*1e3)
	default:
		return fmt.Sprintf("%.1f µs", s*1e6)
	}
}
