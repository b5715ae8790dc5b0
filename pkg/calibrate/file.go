package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Load reads a calibration file, strictly: unknown fields and another
// schema are errors.
func Load(path string) (*Calibration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read calibration: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("read calibration %s: %w", path, err)
	}
	if c.Schema != Schema {
		return nil, fmt.Errorf("read calibration %s: schema %d, this version reads %d (run crucible calibrate)", path, c.Schema, Schema)
	}
	return &c, nil
}

// Save writes the calibration to path (creating its directory) through a
// temporary file, so a reader never sees half of it.
func (c *Calibration) Save(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calibration-*")
	if err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write calibration: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write calibration: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write calibration: %w", err)
	}
	return nil
}

// Paths lists where a calibration is looked for, in order:
//
//  1. the file named by CRUCIBLE_CALIBRATION, when set;
//  2. FileName in the data directory;
//  3. FileName in the user cache directory's "crucible" folder
//     ($XDG_CACHE_HOME/crucible, ~/.cache/crucible on Linux), where
//     crucible calibrate writes when the data directory is read-only.
func Paths(dataDir string) []string {
	var out []string
	if p := os.Getenv(EnvFile); p != "" {
		out = append(out, p)
	}
	if dataDir != "" {
		out = append(out, filepath.Join(dataDir, FileName))
	}
	if c, err := os.UserCacheDir(); err == nil {
		out = append(out, filepath.Join(c, "crucible", FileName))
	}
	return out
}

// Find loads the first calibration in the lookup order (Paths) and
// returns it with its path; ErrNoCalibration when there is none. A file
// named by CRUCIBLE_CALIBRATION that does not exist is an error, not
// skipped.
func Find(dataDir string) (*Calibration, string, error) {
	env := os.Getenv(EnvFile)
	for _, p := range Paths(dataDir) {
		c, err := Load(p)
		if err == nil {
			return c, p, nil
		}
		if errors.Is(err, fs.ErrNotExist) && p != env {
			continue
		}
		return nil, p, err
	}
	return nil, "", fmt.Errorf("%w: none of %v (run crucible calibrate)", ErrNoCalibration, Paths(dataDir))
}

// DefaultOutput is where crucible calibrate writes without --out: the
// data directory when it is writable, else the user cache (Paths).
func DefaultOutput(dataDir string) (string, error) {
	if dataDir != "" {
		probe, err := os.CreateTemp(dataDir, ".calibration-probe-*")
		if err == nil {
			probe.Close()
			os.Remove(probe.Name())
			return filepath.Join(dataDir, FileName), nil
		}
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("calibration output: the data directory is not writable and there is no user cache directory (%w); use --out", err)
	}
	return filepath.Join(c, "crucible", FileName), nil
}
