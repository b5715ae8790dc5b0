package results

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// ReadPrompts reads a prompts.jsonl file, or the one in a directory (a
// local run's result). A line that does not decode is an error naming it.
func ReadPrompts(path string) ([]*messages.Prompt, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "prompts.jsonl")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*messages.Prompt
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4*messages.MaxPromptAnswer+(1<<20))
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p messages.Prompt
		if err := messages.Decode(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, &p)
	}
	return out, sc.Err()
}

// SortPrompts orders records by generation, attempt and index.
func SortPrompts(ps []*messages.Prompt) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Generation != b.Generation {
			return a.Generation < b.Generation
		}
		if a.Attempt != b.Attempt {
			return a.Attempt < b.Attempt
		}
		return a.Index < b.Index
	})
}
