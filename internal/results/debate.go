package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// ErrNoDebate: a local run's output holds no debated verdict of the
// candidate.
var ErrNoDebate = errors.New("no debate")

// ReadVerdicts reads the verdicts of a local run's output folder: its
// discoveries.jsonl, then its verdicts.jsonl (either may be absent).
func ReadVerdicts(dir string) ([]*messages.Verdict, error) {
	var out []*messages.Verdict
	for _, name := range []string{"discoveries.jsonl", "verdicts.jsonl"} {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for line := 1; sc.Scan(); line++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var v messages.Verdict
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			out = append(out, &v)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DebateOf returns the debated verdict of a candidate among verdicts.
func DebateOf(vs []*messages.Verdict, id string) (*messages.Verdict, error) {
	for _, v := range vs {
		if v.ID == id {
			if v.Debate == nil {
				return nil, fmt.Errorf("%w: %s was judged by %s (%s)", ErrNoDebate, id, v.JudgedBy, v.JudgedNote)
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: no verdict of %s", ErrNoDebate, id)
}

// DebateLine is one line of a debated verdict: candidate, formula, the
// debate's verdict, confidence and rounds.
func DebateLine(v *messages.Verdict) string {
	if v.Debate == nil {
		return fmt.Sprintf("%s  %-12s  judged by %s", v.ID, v.Formula, v.JudgedBy)
	}
	d := v.Debate
	return fmt.Sprintf("%s  %-12s  %-17s  confidence %.2f  %d round(s)", v.ID, v.Formula, d.Verdict, d.Confidence, len(d.Rounds))
}

// LocalDebate reads a local run's output folder: the transcript of a
// candidate's debate (its verdict's debate, without LLM exchanges), or
// with id "" one DebateLine per verdict.
func LocalDebate(dir, id string) (*debate.Transcript, []string, error) {
	vs, err := ReadVerdicts(dir)
	if err != nil {
		return nil, nil, err
	}
	if id == "" {
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = DebateLine(v)
		}
		return nil, lines, nil
	}
	v, err := DebateOf(vs, id)
	if err != nil {
		return nil, nil, err
	}
	return &debate.Transcript{Campaign: v.Campaign, Candidate: v.ID, Formula: v.Formula, Debate: *v.Debate}, nil, nil
}
