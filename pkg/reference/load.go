package reference

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ErrBadTable is returned for a reference table that cannot be read: a
// wrong header, a malformed row, an unparsable formula or a non-finite
// value. The error names the file and line.
var ErrBadTable = errors.New("bad reference table")

// header is the first line of every table.
const header = "formula,target"

// maxTableSize bounds a table file; the largest published one is 4 MB.
const maxTableSize = 256 << 20

// Stats summarises the rows of one reduced formula in one table: one row
// per polymorph. Values are in the table's unit.
type Stats struct {
	// Count is the number of rows.
	Count int
	// Min, Median and Max are the lowest, median and highest values; the
	// median of an even count is the mean of the two middle values.
	Min, Median, Max float64
	// MinRow is the 0-based data row (header excluded) of the lowest value,
	// the first on ties; MinFormula is its formula as written there.
	MinRow     int
	MinFormula string
}

// tableData is a loaded table.
type tableData struct {
	table Table
	rows  int
	// index maps a reduced-formula id (rowReader.finish) to its position
	// in stats, or −1.
	index []int32
	stats []Stats
	// comps are the parsed compositions of each group's lowest row, kept
	// only for the formation energy table (the hull's phases).
	comps []crystal.Composition
}

// Load reads every table of Tables from dir (a folder holding the CSV
// files). A missing file is an error wrapping fs.ErrNotExist; a malformed
// one wraps ErrBadTable and names the file and line.
//
// Loading is in three steps, so that it stays well under a second for the
// 8 MB of published tables: the files are split into rows, with each
// distinct formula string numbered once across all tables (the 290 000
// rows hold 160 000 distinct strings); the distinct formulas are parsed
// and reduced in parallel; then each table's rows are grouped by reduced
// formula.
func Load(dir string) (*DB, error) {
	r := newRowReader()
	for _, t := range tables {
		path := filepath.Join(dir, t.File())
		data, err := readFile(path)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		if err := r.read(t, data); err != nil {
			return nil, fmt.Errorf("reference: %s: %w", path, err)
		}
	}
	reduced, loaded, err := r.finish()
	if err != nil {
		return nil, fmt.Errorf("reference: %s: %w", dir, err)
	}
	return newDB(reduced, loaded), nil
}

func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxTableSize {
		return nil, fmt.Errorf("%w: %s is larger than %d MiB", ErrBadTable, path, maxTableSize>>20)
	}
	return os.ReadFile(path)
}

// rowReader collects the rows of several tables, numbering distinct
// formula strings across them.
type rowReader struct {
	ids      map[string]int32 // formula as written → id
	formulas []string         // by id
	where    []position       // by id: where it first appears, for errors
	tables   []rawTable
}

// position is a line of a table.
type position struct {
	table int32
	line  int32
}

type rawTable struct {
	table  Table
	ids    []int32 // per row, the formula id
	values []float64
}

func newRowReader() *rowReader {
	const distinct = 1 << 18 // the published tables have 162 269 distinct formula strings
	return &rowReader{
		ids:      make(map[string]int32, distinct),
		formulas: make([]string, 0, distinct),
		where:    make([]position, 0, distinct),
	}
}

// read splits one table into rows.
func (r *rowReader) read(t Table, data []byte) error {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if len(data) == 0 {
		return fmt.Errorf("%w: empty file, want the header %q", ErrBadTable, header)
	}
	if h := string(trimLine(first)); h != header {
		return fmt.Errorf("%w: line 1: header %q, want %q", ErrBadTable, h, header)
	}
	n := bytes.Count(rest, []byte("\n")) + 1
	raw := rawTable{table: t, ids: make([]int32, 0, n), values: make([]float64, 0, n)}
	for line := 2; len(rest) > 0; line++ {
		var b []byte
		b, rest, _ = bytes.Cut(rest, []byte("\n"))
		b = trimLine(b)
		if len(b) == 0 {
			continue
		}
		comma := bytes.IndexByte(b, ',')
		if comma <= 0 || bytes.IndexByte(b[comma+1:], ',') >= 0 || bytes.IndexByte(b, '"') >= 0 {
			return fmt.Errorf("%w: line %d: %q is not formula,target", ErrBadTable, line, b)
		}
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(b[comma+1:])), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: line %d: target %q is not a finite number", ErrBadTable, line, b[comma+1:])
		}
		if t == RefractiveIndex && v <= 0 {
			// ε∞ = n² is monotone only for n > 0, and n ≤ 0 is unphysical.
			return fmt.Errorf("%w: line %d: refractive index %v is not positive", ErrBadTable, line, v)
		}
		id, ok := r.ids[string(b[:comma])]
		if !ok {
			id = int32(len(r.formulas))
			f := string(b[:comma])
			r.ids[f] = id
			r.formulas = append(r.formulas, f)
			r.where = append(r.where, position{int32(len(r.tables)), int32(line)})
		}
		raw.ids = append(raw.ids, id)
		raw.values = append(raw.values, v)
	}
	r.tables = append(r.tables, raw)
	return nil
}

// parsed is one distinct formula string, parsed and reduced.
type parsed struct {
	reduced string
	comp    crystal.Composition
	err     error
}

// finish parses every distinct formula in parallel, numbers the distinct
// reduced formulas, and groups each table by them. It returns the reduced
// formula ids and the tables.
func (r *rowReader) finish() (map[string]int32, []*tableData, error) {
	out := make([]parsed, len(r.formulas))
	workers := max(1, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(out); i += workers {
				c, err := crystal.ParseFormula(r.formulas[i])
				if err != nil {
					at := r.where[i]
					out[i].err = fmt.Errorf("%w: %s line %d: %w", ErrBadTable, r.tables[at.table].table.File(), at.line, err)
					continue
				}
				out[i] = parsed{reduced: c.ReducedFormula(), comp: c}
			}
		})
	}
	wg.Wait()
	reducedID := make(map[string]int32, len(out))
	rid := make([]int32, len(out)) // formula id → reduced id
	for i, p := range out {
		if p.err != nil {
			return nil, nil, p.err
		}
		id, ok := reducedID[p.reduced]
		if !ok {
			id = int32(len(reducedID))
			reducedID[p.reduced] = id
		}
		rid[i] = id
	}
	loaded := make([]*tableData, len(r.tables))
	for i, raw := range r.tables {
		wg.Go(func() { loaded[i] = group(raw, rid, len(reducedID), out, r.formulas) })
	}
	wg.Wait()
	return reducedID, loaded, nil
}

// group combines a table's rows by reduced formula (rid maps formula ids
// to the nReduced reduced-formula ids): the rows are ordered by group (a
// counting sort) and each group's values sorted for the median.
func group(raw rawTable, rid []int32, nReduced int, formulas []parsed, written []string) *tableData {
	td := &tableData{
		table: raw.table, rows: len(raw.values),
		index: make([]int32, nReduced),
		stats: make([]Stats, 0, min(nReduced, len(raw.values))),
	}
	for i := range td.index {
		td.index[i] = -1
	}
	rowGroup := make([]int32, len(raw.ids))
	for row, id := range raw.ids {
		gi := td.index[rid[id]]
		if gi < 0 {
			gi = int32(len(td.stats))
			td.index[rid[id]] = gi
			td.stats = append(td.stats, Stats{MinRow: row})
		}
		s := &td.stats[gi]
		s.Count++
		if raw.values[row] < raw.values[s.MinRow] {
			s.MinRow = row
		}
		rowGroup[row] = gi
	}
	offset := make([]int, len(td.stats)+1)
	for _, gi := range rowGroup {
		offset[gi+1]++
	}
	for i := range td.stats {
		offset[i+1] += offset[i]
	}
	sorted := make([]float64, len(raw.values))
	next := slices.Clone(offset[:len(td.stats)])
	for row, gi := range rowGroup {
		sorted[next[gi]] = raw.values[row]
		next[gi]++
	}
	keepComp := raw.table == FormationEnergy
	if keepComp {
		td.comps = make([]crystal.Composition, len(td.stats))
	}
	for i := range td.stats {
		s := &td.stats[i]
		vs := sorted[offset[i]:offset[i+1]]
		slices.Sort(vs)
		s.Min, s.Median, s.Max = vs[0], median(vs), vs[len(vs)-1]
		minID := raw.ids[s.MinRow]
		s.MinFormula = written[minID]
		if keepComp {
			td.comps[i] = formulas[minID].comp
		}
	}
	return td
}

// median of sorted values: the middle one, or the mean of the two middle
// ones.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// trimLine removes a trailing carriage return and surrounding spaces.
func trimLine(b []byte) []byte {
	return bytes.TrimSpace(bytes.TrimSuffix(b, []byte("\r")))
}
