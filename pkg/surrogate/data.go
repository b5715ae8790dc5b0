package surrogate

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// TablesDir is the folder of a data directory that holds the data files.
const TablesDir = "data"

// Room-temperature window of the conductivity data (K).
const (
	RoomTempMin = 280.0
	RoomTempMax = 320.0
)

// ErrData reports a data file that cannot be used as a whole (missing
// columns, unreadable CSV).
var ErrData = errors.New("bad surrogate data")

// Reason codes of rows left out of a training set.
const (
	RejectFormula     = "bad_formula"         // the formula does not parse
	RejectStructure   = "bad_structure"       // the CIF does not parse, or disagrees with the formula
	RejectValue       = "bad_value"           // a number does not parse, or the target is not positive and finite
	RejectElement     = "unsupported_element" // an element without descriptor data
	RejectTemperature = "temperature"         // measured outside RoomTempMin–RoomTempMax
	RejectDescriptors = "descriptors"         // the descriptors cannot be computed
)

// Rejection is a data row left out, with why.
type Rejection struct {
	Row    int    `json:"row"` // 1-based data row (after the header)
	ID     string `json:"id"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Sample is one training example.
type Sample struct {
	// ID is the material id, or the composition key of aggregated rows.
	ID          string
	Formula     string
	Composition crystal.Composition
	Structure   *crystal.Structure // nil for composition-only data
	// Target in the property's unit.
	Target float64
	// Group keys samples that must stay in one fold under grouped
	// cross-validation: the reduced formula (polymorphs), or for
	// conductivity the connected set of compositions and sources.
	Group string
	// Properties are other properties known for the sample, by canonical
	// name (the DFT band gap of the dielectric set).
	Properties map[string]float64
	// Rows are the 1-based data rows the sample comes from.
	Rows []int
}

// Dataset is a property's training set as read from its file.
type Dataset struct {
	Property string
	File     string
	// SHA256 of the file's bytes, hex.
	SHA256 string
	// Rows read (data rows, without the header).
	Rows     int
	Samples  []Sample
	Rejected []Rejection
	// Notes say how rows became samples (filters, aggregation).
	Notes []string
}

// LoadDataset reads the training set of a property from the data
// directory dir (its file in dir/data).
func LoadDataset(property, dir string) (*Dataset, error) {
	p, err := PropertyByName(property)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, TablesDir, p.File)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("surrogate data for %s: %w", property, err)
	}
	sum := sha256.Sum256(data)
	ds := &Dataset{Property: property, File: p.File, SHA256: hex.EncodeToString(sum[:])}
	switch property {
	case "dielectric_constant":
		err = readStructureSet(ds, data, "poly_total", positive)
	case "piezo_max_dielectric":
		err = readStructureSet(ds, data, "e_total_diag", largestOfList)
	case "piezo_max_eij":
		err = readStructureSet(ds, data, "eij_max_C_per_m2", positive)
	case "conductivity":
		err = readConductivity(ds, data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.File, err)
	}
	if len(ds.Samples) == 0 {
		return nil, fmt.Errorf("%w: %s: no usable rows", ErrData, p.File)
	}
	return ds, nil
}

// table is a CSV file with named columns.
type table struct {
	cols map[string]int
	rows [][]string
}

func readTable(data []byte, required ...string) (*table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrData, err)
	}
	t := &table{cols: make(map[string]int)}
	for i, h := range header {
		t.cols[strings.TrimPrefix(h, "\ufeff")] = i
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%w: no column %q (have %s)", ErrData, c, strings.Join(header, ","))
		}
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrData, err)
		}
		t.rows = append(t.rows, rec)
	}
	return t, nil
}

func (t *table) get(row []string, col string) string { return strings.TrimSpace(row[t.cols[col]]) }

// positive parses a positive finite number.
func positive(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%v is not positive and finite", v)
	}
	return v, nil
}

// largestOfList parses a ';'-separated list of numbers (a tensor's
// diagonal) and returns the largest, which must be positive and finite.
func largestOfList(s string) (float64, error) {
	parts := strings.Split(s, ";")
	best := math.Inf(-1)
	for _, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return 0, err
		}
		if math.IsNaN(v) {
			return 0, fmt.Errorf("%q has NaN", s)
		}
		best = max(best, v)
	}
	if len(parts) != 3 {
		return 0, fmt.Errorf("%q: want 3 diagonal elements, got %d", s, len(parts))
	}
	return positive(strconv.FormatFloat(best, 'g', -1, 64))
}

// checkElements returns an error naming the first element the descriptors
// do not support.
func checkElements(c crystal.Composition) error {
	for _, e := range c.Elements() {
		if !supported(e) {
			return fmt.Errorf("%w: %s", ErrUnsupportedElement, e)
		}
	}
	return nil
}

// readStructureSet reads a Materials Project set with material_id,
// formula, the target column and a CIF; the dielectric set's band gap
// becomes the sample's "band_gap".
func readStructureSet(ds *Dataset, data []byte, target string, parse func(string) (float64, error)) error {
	t, err := readTable(data, "material_id", "formula", target, "cif")
	if err != nil {
		return err
	}
	_, hasGap := t.cols["band_gap_pbe"]
	ds.Rows = len(t.rows)
	for i, row := range t.rows {
		id, formula := t.get(row, "material_id"), t.get(row, "formula")
		reject := func(code string, err error) {
			ds.Rejected = append(ds.Rejected, Rejection{Row: i + 1, ID: id, Code: code, Detail: err.Error()})
		}
		comp, err := crystal.ParseFormula(formula)
		if err != nil {
			reject(RejectFormula, err)
			continue
		}
		y, err := parse(t.get(row, target))
		if err != nil {
			reject(RejectValue, fmt.Errorf("%s: %w", target, err))
			continue
		}
		s, err := crystal.ParseCIF([]byte(row[t.cols["cif"]]))
		if err != nil {
			reject(RejectStructure, err)
			continue
		}
		if !s.Composition().SameReduced(comp) {
			reject(RejectStructure, fmt.Errorf("CIF is %s, formula %s", s.Composition().ReducedFormula(), formula))
			continue
		}
		if err := checkElements(comp); err != nil {
			reject(RejectElement, err)
			continue
		}
		smp := Sample{ID: id, Formula: formula, Composition: comp, Structure: s, Target: y,
			Group: comp.ReducedFormula(), Rows: []int{i + 1}}
		if hasGap {
			gap, err := strconv.ParseFloat(t.get(row, "band_gap_pbe"), 64)
			if err != nil || gap < 0 || math.IsInf(gap, 0) || math.IsNaN(gap) {
				reject(RejectValue, fmt.Errorf("band_gap_pbe %q", t.get(row, "band_gap_pbe")))
				continue
			}
			smp.Properties = map[string]float64{"band_gap": gap}
		}
		ds.Samples = append(ds.Samples, smp)
	}
	return nil
}

// compositionKey identifies a composition up to scaling: its elements in
// order of atomic number with their atomic fractions to 4 decimals, so
// "Ag2.0Se0.5Te0.5" and "Ag4SeTe" meet.
func compositionKey(c crystal.Composition) string {
	items := c.Items()
	slices.SortFunc(items, func(a, b crystal.ElementAmount) int { return int(a.Element) - int(b.Element) })
	total := c.NumAtoms()
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%s%.4f", it.Element, it.Amount/total)
	}
	return b.String()
}

// normalizeDOI strips resolver prefixes and case from a reference.
func normalizeDOI(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "dx.doi.org/", "doi.org/", "doi:"} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// readConductivity reads the ESTM measurements: rows measured within
// RoomTempMin–RoomTempMax are kept, converted from S/m to S/cm, and
// aggregated per composition (compositionKey) as the median of log10 σ
// over the composition's rows (several sources, or several temperatures
// in the window); the median is robust to one outlying sample of a
// composition, and in log space because σ spans eight decades. Groups for
// grouped cross-validation are the connected components of the graph
// linking each composition to the sources that measured it, so no source
// has samples in two folds.
func readConductivity(ds *Dataset, data []byte) error {
	const (
		colFormula = "Formula"
		colT       = "temperature(K)"
		colSigma   = "electrical_conductivity(S/m)"
		colRef     = "reference"
	)
	t, err := readTable(data, colFormula, colT, colSigma, colRef)
	if err != nil {
		return err
	}
	ds.Rows = len(t.rows)
	type agg struct {
		formula string
		comp    crystal.Composition
		logs    []float64
		refs    []string
		rows    []int
	}
	byKey := map[string]*agg{}
	var keys []string
	outside := 0
	for i, row := range t.rows {
		formula := t.get(row, colFormula)
		reject := func(code string, err error) {
			ds.Rejected = append(ds.Rejected, Rejection{Row: i + 1, ID: formula, Code: code, Detail: err.Error()})
		}
		temp, err := strconv.ParseFloat(t.get(row, colT), 64)
		if err != nil || math.IsNaN(temp) {
			reject(RejectValue, fmt.Errorf("temperature %q", t.get(row, colT)))
			continue
		}
		if temp < RoomTempMin || temp > RoomTempMax {
			outside++
			continue
		}
		comp, err := crystal.ParseFormula(formula)
		if err != nil {
			reject(RejectFormula, err)
			continue
		}
		sigma, err := positive(t.get(row, colSigma))
		if err != nil {
			reject(RejectValue, fmt.Errorf("conductivity: %w", err))
			continue
		}
		if err := checkElements(comp); err != nil {
			reject(RejectElement, err)
			continue
		}
		k := compositionKey(comp)
		a := byKey[k]
		if a == nil {
			a = &agg{formula: formula, comp: comp}
			byKey[k] = a
			keys = append(keys, k)
		}
		a.logs = append(a.logs, math.Log10(sigma/100)) // S/m → S/cm
		a.refs = append(a.refs, normalizeDOI(t.get(row, colRef)))
		a.rows = append(a.rows, i+1)
	}
	// Groups: union-find over compositions and sources.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == "" || parent[x] == x {
			parent[x] = x
			return x
		}
		r := find(parent[x])
		parent[x] = r
		return r
	}
	for _, k := range keys {
		for _, ref := range byKey[k].refs {
			a, b := find("c:"+k), find("r:"+ref)
			if a != b {
				parent[a] = b
			}
		}
	}
	multi := 0
	for _, k := range keys {
		a := byKey[k]
		if len(a.logs) > 1 {
			multi++
		}
		ds.Samples = append(ds.Samples, Sample{
			ID: k, Formula: a.formula, Composition: a.comp, Target: math.Pow(10, median(a.logs)),
			Group: find("c:" + k), Rows: a.rows,
		})
	}
	ds.Notes = append(ds.Notes,
		fmt.Sprintf("%d of %d rows measured outside %g–%g K left out", outside, ds.Rows, RoomTempMin, RoomTempMax),
		fmt.Sprintf("%d rows in the window aggregated into %d compositions (%d with more than one row) by the median of log10 σ",
			ds.Rows-outside-len(ds.Rejected), len(ds.Samples), multi),
		"conductivity converted from S/m to S/cm (÷100)")
	return nil
}

// median of v (mean of the two middle values for an even count); v is
// sorted in place.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
