package datadir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
)

// ErrChecksum is matched (errors.Is) by a file whose content does not have
// the expected SHA-256 sum.
var ErrChecksum = errors.New("checksum mismatch")

// State is what Check found for a file.
type State int

const (
	// OK: present with the expected sum.
	OK State = iota
	// Missing: not in the data directory.
	Missing
	// Corrupt: present with another sum (a truncated download, a local
	// edit, a changed upstream file).
	Corrupt
	// Unreadable: present but could not be read.
	Unreadable
)

func (s State) String() string {
	switch s {
	case OK:
		return "ok"
	case Missing:
		return "missing"
	case Corrupt:
		return "checksum mismatch"
	case Unreadable:
		return "unreadable"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Status is the state of one file of a data directory.
type Status struct {
	File  File
	State State
	// Size and SHA256 are the file's as found (zero when missing).
	Size   int64
	SHA256 string
	// Err says why a file is Unreadable or Corrupt.
	Err error
}

// Check reads every file of the manifest in dir and compares its sum.
func Check(dir string) []Status {
	out := make([]Status, len(manifest))
	for i, f := range Files() {
		out[i] = checkFile(dir, f)
	}
	return out
}

func checkFile(dir string, f File) Status {
	st := Status{File: f}
	path := filepath.Join(dir, filepath.FromSlash(f.Path))
	sum, size, err := fileSum(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.State = Missing
	case err != nil:
		st.State, st.Err = Unreadable, err
	default:
		st.Size, st.SHA256 = size, sum
		if sum != f.SHA256 {
			st.State = Corrupt
			st.Err = fmt.Errorf("%w: %s has sha256 %s (%d bytes), want %s (%d bytes)", ErrChecksum, f.Path, sum, size, f.SHA256, f.Size)
		}
	}
	return st
}

// fileSum returns the hex SHA-256 sum and size of a regular file.
func fileSum(path string) (string, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Problems returns the statuses that make a data directory unusable: a
// required file missing or unreadable, or any file with a wrong sum.
func Problems(statuses []Status) []Status {
	var out []Status
	for _, s := range statuses {
		switch {
		case s.State == Corrupt, s.State == Unreadable:
			out = append(out, s)
		case s.State == Missing && s.File.Required:
			out = append(out, s)
		}
	}
	return out
}

// WriteCheck writes statuses as "crucible data check" does: the
// directory, a table of state, file, size and whether the oracle needs
// it, then the errors met reading files.
func WriteCheck(w io.Writer, dir string, statuses []Status) error {
	fmt.Fprintf(w, "data directory %s\n", dir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tFILE\tSIZE\tNEEDED")
	for _, s := range statuses {
		need := "optional"
		if s.File.Required {
			need = "required"
		}
		size := "-"
		if s.State != Missing {
			size = fmt.Sprint(s.Size)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.State, s.File.Path, size, need)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range statuses {
		if s.Err != nil {
			fmt.Fprintf(w, "%s: %v\n", s.File.Path, s.Err)
		}
	}
	return nil
}
