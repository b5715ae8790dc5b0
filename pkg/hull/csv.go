package hull

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// CSVEntry is an entry read by ReadEntriesCSV, with its formula as written
// and the line it was read from.
type CSVEntry struct {
	Entry
	Formula string
	Line    int
}

// Query is a hypothetical phase read by ReadQueriesCSV: a composition and
// its formation energy per atom (eV), to place against a diagram without
// joining it (Diagram.Query).
type Query struct {
	Formula       string
	Composition   crystal.Composition
	EnergyPerAtom float64
}

// ReadEntriesCSV reads the entries of a CSV file whose header names the
// columns id, formula and e_form_per_atom (others are ignored; a byte-order
// mark and surrounding spaces are allowed). An id repeated for the same
// entry is read once; for a different one it is ErrDuplicateID. Errors
// name the file and line; a file without entries is an error.
func ReadEntriesCSV(path string) ([]CSVEntry, error) {
	var out []CSVEntry
	first := map[string]int{}
	err := readCSV(path, []string{"id", "formula", "e_form_per_atom"}, func(line int, f []string) error {
		if f[0] == "" {
			return errors.New("empty id")
		}
		c, err := crystal.ParseFormula(f[1])
		if err != nil {
			return err
		}
		e, err := parseEnergy(f[2])
		if err != nil {
			return err
		}
		if i, ok := first[f[0]]; ok {
			prev := out[i]
			if prev.EnergyPerAtom != e || !prev.Composition.Equal(c, 1e-8) {
				return fmt.Errorf("%w: %q already used on line %d for a different entry", ErrDuplicateID, f[0], prev.Line)
			}
			return nil
		}
		first[f[0]] = len(out)
		out = append(out, CSVEntry{Entry: Entry{ID: f[0], Composition: c, EnergyPerAtom: e}, Formula: f[1], Line: line})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no entries", path)
	}
	return out, nil
}

// ReadQueriesCSV reads the queries of a CSV file whose header names the
// columns formula and e_form_per_atom, in file order. Errors name the file
// and line.
func ReadQueriesCSV(path string) ([]Query, error) {
	var out []Query
	err := readCSV(path, []string{"formula", "e_form_per_atom"}, func(line int, f []string) error {
		c, err := crystal.ParseFormula(f[0])
		if err != nil {
			return err
		}
		e, err := parseEnergy(f[1])
		if err != nil {
			return err
		}
		out = append(out, Query{Formula: f[0], Composition: c, EnergyPerAtom: e})
		return nil
	})
	return out, err
}

// readCSV reads a CSV file with a header naming at least the columns
// wanted, and calls row with those fields of every record and its line.
func readCSV(path string, want []string, row func(line int, fields []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty file, want a header %s", path, strings.Join(want, ","))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	idx := make([]int, len(want))
	for i, name := range want {
		c, ok := col[name]
		if !ok {
			return fmt.Errorf("%s:1: header %q has no column %q (want %s)", path, strings.Join(header, ","), name, strings.Join(want, ","))
		}
		idx[i] = c
	}
	fields := make([]string, len(want))
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d: %w", path, pe.StartLine, pe.Err)
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		for i, c := range idx {
			fields[i] = strings.TrimSpace(rec[c])
		}
		if err := row(line, fields); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

// parseEnergy reads a finite formation energy.
func parseEnergy(s string) (float64, error) {
	e, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(e) || math.IsInf(e, 0) {
		return 0, fmt.Errorf("e_form_per_atom %q is not a finite number", s)
	}
	return e, nil
}
