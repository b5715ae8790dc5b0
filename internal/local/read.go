package local

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Read reads back what Write stored in dir (a local run's folder,
// finished or interrupted): the summary, the evaluations, the seeds and
// the judge's verdicts. Files a run did not write are left empty; a
// folder without summary.json is no run.
func Read(dir string) (*Result, error) {
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no crucible local results (no summary.json)", dir)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Summary: &messages.Summary{}}
	if err := json.Unmarshal(data, res.Summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "summary.json"), err)
	}
	if err := readJSONL(filepath.Join(dir, "evaluations.jsonl"), &res.Evaluations); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "seeds.jsonl"), &res.Seeds); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "discoveries.jsonl"), &res.Discoveries); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "verdicts.jsonl"), &res.Verdicts); err != nil {
		return nil, err
	}
	return res, nil
}

// readJSONL appends the JSON lines of path to out; a missing file adds
// nothing.
func readJSONL[T any](path string, out *[]*T) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		v := new(T)
		if err := json.Unmarshal(sc.Bytes(), v); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		*out = append(*out, v)
	}
	return sc.Err()
}
