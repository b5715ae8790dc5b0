package surrogate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrNoModel: no model file for a property in the data directory or the
// cache, or only one trained on other data. The message says how to get
// one.
var ErrNoModel = errors.New("no surrogate model")

// CacheEnv names the directory where models trained on first use go; by
// default the user cache directory's crucible folder (~/.cache/crucible on
// Linux, which is also the default data directory).
const CacheEnv = "CRUCIBLE_MODEL_CACHE"

// CacheDir is the directory whose models/surrogate folder holds models
// trained on first use: $CRUCIBLE_MODEL_CACHE, else the user cache
// directory's crucible folder.
func CacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("surrogate model cache: %w (set %s)", err, CacheEnv)
	}
	return filepath.Join(d, "crucible"), nil
}

// DataChecksum is the SHA-256 (hex) of a property's training data in the
// data directory dir, as a model file records it (Training.SHA256).
func DataChecksum(property, dir string) (string, error) {
	p, err := PropertyByName(property)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(dir, TablesDir, p.File))
	if err != nil {
		return "", fmt.Errorf("surrogate data for %s: %w", property, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// Find returns the model of a property for the data directory dir and
// where it was found: dir's models/surrogate folder (Path), then the
// cache's (CacheDir). A model counts only if it was trained on the data
// dir holds now (same checksum); a stale or missing one is ErrNoModel,
// saying how to train it. A file that exists but cannot be read is an
// error of its own (ErrModelFile).
func Find(property, dir string) (*Model, string, error) {
	sum, err := DataChecksum(property, dir)
	if err != nil {
		return nil, "", err
	}
	var stale []string
	for _, path := range candidatePaths(property, dir) {
		m, err := LoadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if errors.Is(err, ErrDescriptorVersion) {
			stale = append(stale, path)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if m.Property != property {
			return nil, "", fmt.Errorf("%w: %s holds a model of %s", ErrModelFile, path, m.Property)
		}
		if m.Training.SHA256 != sum {
			stale = append(stale, path)
			continue
		}
		return m, path, nil
	}
	how := fmt.Sprintf(`run "crucible train %s" (about a minute; writes %s, or with --out elsewhere)`, property, Path(dir, property))
	if len(stale) > 0 {
		return nil, "", fmt.Errorf("%w for %s: %v trained on other data than %s holds now; %s", ErrNoModel, property, stale, dir, how)
	}
	return nil, "", fmt.Errorf("%w for %s: %s", ErrNoModel, property, how)
}

// candidatePaths are where Find looks, in order.
func candidatePaths(property, dir string) []string {
	paths := []string{Path(dir, property)}
	if c, err := CacheDir(); err == nil {
		if cp := Path(c, property); cp != paths[0] {
			paths = append(paths, cp)
		}
	}
	return paths
}

// EnsureOptions configure Ensure.
type EnsureOptions struct {
	// Train are the options of a training on first use; Quick is set.
	Train Options
	// Log, when set, is told that a model is being trained and where it
	// goes (training takes tens of seconds).
	Log func(format string, args ...any)
}

// Ensure returns the model of a property for the data directory dir, as
// Find does, and when there is none trains it (Train with Options.Quick:
// the same model as "crucible train" writes, with a shorter report) and
// saves it into the cache (CacheDir), never into dir: the data directory
// changes only by explicit commands ("crucible data pull", "crucible
// train"), and may be read-only. Concurrent callers, in this or other
// processes, train once: the others wait for the file (a lock file beside
// it; one older than lockStale is taken over).
func Ensure(property, dir string, opt EnsureOptions) (*Model, string, error) {
	m, path, err := Find(property, dir)
	if err == nil || !errors.Is(err, ErrNoModel) {
		return m, path, err
	}
	c, cerr := CacheDir()
	if cerr != nil {
		return nil, "", fmt.Errorf("%w (and no cache to train it into: %v)", err, cerr)
	}
	path = Path(c, property)
	if !writable(filepath.Dir(path)) {
		return nil, "", fmt.Errorf("%w (the model cache %s cannot be written; set %s)", err, c, CacheEnv)
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	// Another process may have trained it while this one waited.
	if m, p, err := Find(property, dir); err == nil {
		return m, p, nil
	}
	if opt.Log != nil {
		opt.Log("training the %s surrogate on %s (once; saved to %s)", property, dir, path)
	}
	topt := opt.Train
	topt.Quick = true
	m, _, err = Train(property, dir, topt)
	if err != nil {
		return nil, "", fmt.Errorf("train %s: %w", property, err)
	}
	if err := m.SaveFile(path); err != nil {
		return nil, "", err
	}
	return m, path, nil
}

// writable reports whether files can be created in dir (made if needed).
func writable(dir string) bool {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}

// lockStale is the age past which a lock file is taken to be left by a
// process that died while training.
const lockStale = 20 * time.Minute

// lockFile takes an exclusive lock file, waiting while another holds it,
// and returns its release.
func lockFile(path string) (func(), error) {
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("surrogate model lock: %w", err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > lockStale {
			os.Remove(path)
			continue
		}
		time.Sleep(500 * time.Millisecond)
	}
}
