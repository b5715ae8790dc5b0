package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// FromDir reads a local run's folder ("crucible local --out DIR"):
// evaluations.jsonl (required), discoveries.jsonl and summary.json (when
// present: a run stopped early may have none). The folder stores no
// discovery curve, so it is derived from the evaluations; the budget is
// the summary's episodes' budgets, else the number of evaluations. A line
// that does not decode is an error naming the file and line.
func FromDir(dir string) (*Data, error) {
	var evs []*messages.Evaluation
	if err := readJSONL(filepath.Join(dir, "evaluations.jsonl"), func() messages.Message { return new(messages.Evaluation) }, func(m messages.Message) {
		evs = append(evs, m.(*messages.Evaluation))
	}); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a local run's folder (no evaluations.jsonl; \"crucible local --out DIR\" writes one)", dir)
		}
		return nil, err
	}
	var found []*messages.Verdict
	if err := readJSONL(filepath.Join(dir, "discoveries.jsonl"), func() messages.Message { return new(messages.Verdict) }, func(m messages.Message) {
		found = append(found, m.(*messages.Verdict))
	}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	in := Input{Evaluations: evs, Discoveries: found, State: "stopped"}
	if data, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
		var s messages.Summary
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "summary.json"), err)
		}
		in.Summary, in.Campaign, in.Task, in.State, in.Objectives = &s, s.Campaign, s.Task, s.State, s.ParetoObjectives
		for _, e := range s.Episodes {
			in.Budget += e.Budget
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if in.Campaign == "" && len(evs) > 0 {
		in.Campaign = evs[0].Campaign
	}
	return Build(in), nil
}

// readJSONL decodes each line of path strictly into a new message and
// hands it to add.
func readJSONL(path string, alloc func() messages.Message, add func(messages.Message)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		m := alloc()
		if err := messages.Decode(sc.Bytes(), m); err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
		add(m)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// FromClient reads a campaign of an installation: its spec and state from
// the store, its stored discovery curve, and its evaluations and
// discoveries from the streams.
func FromClient(ctx context.Context, cl *client.Client, campaign string) (*Data, error) {
	spec, st, err := cl.Campaign(ctx, campaign)
	if err != nil {
		return nil, err
	}
	curve, err := cl.Store.DiscoveryCurve(ctx, campaign)
	if err != nil {
		return nil, fmt.Errorf("discovery curve of %s: %w", campaign, err)
	}
	evs, err := cl.Evaluations(ctx, campaign)
	if err != nil {
		return nil, fmt.Errorf("evaluations of %s: %w", campaign, err)
	}
	found, err := cl.Discoveries(ctx, campaign)
	if err != nil {
		return nil, fmt.Errorf("discoveries of %s: %w", campaign, err)
	}
	if curve == nil {
		curve = []int{}
	}
	return Build(Input{Campaign: campaign, Task: spec.Task.Name, State: st.Status, Budget: spec.Budget,
		Objectives: discovery.Objectives(spec.Task.Constraints), Evaluations: evs, Discoveries: found, Curve: curve}), nil
}
