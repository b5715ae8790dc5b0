package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// A local run keeps what it needs to be resumed in <out>/.crucible: the
// campaign's spec (spec.json), the embedded NATS server's streams
// (jetstream/) and, once interrupted, the embedded store's keys
// (store.json). A run that finishes removes the streams and the store.

// runStateDir is the run's own state folder within its output folder.
const runStateDir = ".crucible"

// StreamsDir is where the embedded NATS server of a run writing to out
// keeps its streams.
func StreamsDir(out string) string { return filepath.Join(out, runStateDir, "jetstream") }

func snapshotPath(out string) string { return filepath.Join(out, runStateDir, "store.json") }
func specPath(out string) string     { return filepath.Join(out, runStateDir, "spec.json") }

// outputs are the files and folders a run writes in its output folder.
var outputs = []string{"evaluations.jsonl", "seeds.jsonl", "discoveries.jsonl", "verdicts.jsonl", "reflections.jsonl",
	"prompts.jsonl", "summary.json", "discoveries", runStateDir}

// ErrOutNotEmpty is wrapped by PrepareOut's error for a folder with files.
var ErrOutNotEmpty = errors.New("not empty")

// PrepareOut makes out ready for a new run: it must be missing or empty,
// unless force, which removes the results of an earlier run there (and
// only those: other files stay).
func PrepareOut(out string, force bool) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if !force {
		return fmt.Errorf("output folder %s %w (%d entries): give another --out, --force to replace an earlier run's results, or --resume %s to continue an interrupted run",
			out, ErrOutNotEmpty, len(entries), out)
	}
	for _, name := range outputs {
		if err := os.RemoveAll(filepath.Join(out, name)); err != nil {
			return err
		}
	}
	return nil
}

// WriteRunSpec keeps a run's campaign in out, for --resume.
func WriteRunSpec(out string, spec *messages.CampaignSpec) error {
	if err := os.MkdirAll(filepath.Join(out, runStateDir), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(specPath(out), append(data, '\n'), 0o644)
}

// ReadRunSpec returns the campaign of the run in out.
func ReadRunSpec(out string) (*messages.CampaignSpec, error) {
	data, err := os.ReadFile(specPath(out))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no run to resume (no %s)", out, filepath.Join(runStateDir, "spec.json"))
	}
	if err != nil {
		return nil, err
	}
	spec, err := messages.DecodeSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", specPath(out), err)
	}
	return spec, nil
}

// Suspend stops the stack's services and, when its store is the embedded
// one, writes the store's keys to out for a later --resume.
func (s *Stack) Suspend(ctx context.Context, out string) error {
	s.stopServices()
	if s.redis == nil {
		return nil // real servers keep the state
	}
	snap, err := s.Store.Snapshot(ctx)
	if err != nil {
		return err
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	return os.WriteFile(snapshotPath(out), data, 0o644)
}

// restore loads the store's keys an interrupted run in out kept.
func restore(ctx context.Context, s *store.Store, out string) error {
	data, err := os.ReadFile(snapshotPath(out))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s holds no store of an interrupted run (no %s)", out, filepath.Join(runStateDir, "store.json"))
	}
	if err != nil {
		return err
	}
	var snap store.Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return fmt.Errorf("%s: %w", snapshotPath(out), err)
	}
	return s.Restore(ctx, &snap)
}

// Finished removes the state a finished run in out kept for a resume
// (the streams and the store); the spec stays, with the results. Call it
// after the stack is closed.
func Finished(out string) error {
	return errors.Join(os.RemoveAll(StreamsDir(out)), os.RemoveAll(snapshotPath(out)))
}

// OutDir is the output folder of a run: resumeDir when resuming, else out,
// else crucible-out/<id>, made ready for a new run (PrepareOut).
func OutDir(out, resumeDir, id string, force bool) (string, error) {
	switch {
	case resumeDir != "":
		return resumeDir, nil
	case out == "":
		out = filepath.Join("crucible-out", id)
	}
	return out, PrepareOut(out, force)
}
