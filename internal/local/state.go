package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/crucible-sci/crucible/internal/store"
)

// StateFile is the file of a state directory (crucible local --state)
// that holds the memory banks.
const StateFile = "memory.json"

// ReadState reads the memory banks of a state directory; none when it has
// no state file yet.
func ReadState(dir string) ([]*store.BankDump, error) {
	banks, err := ReadBanks(filepath.Join(dir, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return banks, err
}

// ReadBanks reads memory banks from a JSON file (a state file, or the
// output of "crucible memory export").
func ReadBanks(path string) ([]*store.BankDump, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var banks []*store.BankDump
	if err := json.Unmarshal(b, &banks); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return banks, nil
}

// WriteState writes memory banks to a state directory (created if
// needed), replacing its state file atomically.
func WriteState(dir string, banks []*store.BankDump) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(banks, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, StateFile+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, StateFile))
}

// LoadState imports the memory banks of a state directory into the
// stack's store and returns how many there were.
func LoadState(ctx context.Context, s *store.Store, dir string) (int, error) {
	banks, err := ReadState(dir)
	if err != nil {
		return 0, err
	}
	for _, b := range banks {
		if err := s.ImportBank(ctx, b); err != nil {
			return 0, err
		}
	}
	return len(banks), nil
}

// SaveState exports every memory bank of the store to a state directory.
func SaveState(ctx context.Context, s *store.Store, dir string) error {
	banks, err := ExportBanks(ctx, s)
	if err != nil {
		return err
	}
	return WriteState(dir, banks)
}

// ExportBanks reads the given memory banks, every bank when none is
// named.
func ExportBanks(ctx context.Context, s *store.Store, contexts ...string) ([]*store.BankDump, error) {
	if len(contexts) == 0 {
		var err error
		if contexts, err = s.Banks(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]*store.BankDump, 0, len(contexts))
	for _, c := range contexts {
		d, err := s.ExportBank(ctx, c)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// FilterBanks keeps the banks of the named contexts (all when none is).
func FilterBanks(banks []*store.BankDump, names []string) []*store.BankDump {
	if len(names) == 0 {
		return banks
	}
	var out []*store.BankDump
	for _, b := range banks {
		if slices.Contains(names, b.Context) {
			out = append(out, b)
		}
	}
	return out
}

// MergeBanks returns the imported banks and those of banks whose context
// none of them has.
func MergeBanks(banks, imported []*store.BankDump) []*store.BankDump {
	out := append([]*store.BankDump(nil), imported...)
	for _, b := range banks {
		if len(FilterBanks(imported, []string{b.Context})) == 0 {
			out = append(out, b)
		}
	}
	return out
}

// WriteBanks writes one line per bank: its context and how many lessons,
// directives and reflections it holds.
func WriteBanks(w io.Writer, banks []*store.BankDump) {
	for _, b := range banks {
		fmt.Fprintf(w, "%-40s %3d lessons %3d directives %3d reflections\n", b.Context, len(b.Experiences), len(b.Directives), len(b.Reflections))
	}
}

// WriteBank writes the directives and lessons of the bank of a context.
func WriteBank(w io.Writer, banks []*store.BankDump, context string) error {
	for _, b := range banks {
		if b.Context != context {
			continue
		}
		for _, d := range b.Directives {
			fmt.Fprintf(w, "directive %s: %s\n", d.Key(), d.Reason)
		}
		for _, e := range b.Experiences {
			fmt.Fprintf(w, "%s [%s, support %d] %s\n", e.Key, e.Outcome, e.Support, e.Text)
		}
		return nil
	}
	return fmt.Errorf("no memory bank %q", context)
}

// Memory runs the memory command's verb args[0] (list, show CONTEXT, export
// [CONTEXT…], import FILE) on the banks of a running installation's store
// s, or with s nil on those of the state directory state, writing to w.
// The arguments are checked by the caller.
func Memory(ctx context.Context, w io.Writer, s *store.Store, state string, args []string) error {
	var banks []*store.BankDump
	var err error
	switch {
	case s == nil:
		banks, err = ReadState(state)
	case args[0] == "list":
		banks, err = ExportBanks(ctx, s)
	case args[0] != "import":
		banks, err = ExportBanks(ctx, s, args[1:]...)
	}
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		WriteBanks(w, banks)
	case "show":
		return WriteBank(w, banks, args[1])
	case "export":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(FilterBanks(banks, args[1:]))
	case "import":
		in, err := ReadBanks(args[1])
		if err != nil {
			return err
		}
		if s == nil {
			return WriteState(state, MergeBanks(banks, in))
		}
		for _, b := range in {
			if err := s.ImportBank(ctx, b); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "imported %d banks\n", len(in))
	}
	return nil
}
