// Package datadir locates Crucible's data directory, lists the files it must
// hold with their public sources and SHA-256 sums, checks them, and fetches
// them (crucible data pull / check).
//
// A data directory is laid out as
//
//	data/*.csv            reference tables (Materials Project via Matbench and CrabNet, matminer, ESTM)
//	data/*.yaml, *.json.gz MP energy corrections and elemental reference energies
//	models/cgcnn/         CGCNN checkpoints (*.pth.tar) and atom_init.json
//	models/m3gnet/        the M3GNet potential (state.pt, model.json)
//
// It is named by CRUCIBLE_DATA, and defaults to crucible/ in the user's
// cache folder (~/.cache/crucible on Linux).
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables.
const (
	// EnvDir names the data directory.
	EnvDir = "CRUCIBLE_DATA"
	// EnvMirror names an HTTP mirror of a data directory to pull from
	// instead of the public sources.
	EnvMirror = "CRUCIBLE_DATA_MIRROR"
)

// Sub-folders of a data directory.
const (
	TablesDir = "data"
	ModelsDir = "models/cgcnn"
)

// Tables returns the folder of the reference tables in dir.
func Tables(dir string) string { return filepath.Join(dir, filepath.FromSlash(TablesDir)) }

// Models returns the folder of the CGCNN checkpoints in dir.
func Models(dir string) string { return filepath.Join(dir, filepath.FromSlash(ModelsDir)) }

// Default is the data directory when CRUCIBLE_DATA is unset: crucible/ in
// the user's cache folder.
func Default() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("data directory: %w (set %s)", err, EnvDir)
	}
	return filepath.Join(cache, "crucible"), nil
}

// Dir is the data directory, the one lookup of every command and
// service (a --data flag, when given, comes first): CRUCIBLE_DATA when
// set; else a folder named shared beside the repository the working
// directory is in (the nearest enclosing folder with go.mod or .git; the
// layout the project is developed and demonstrated in) when it holds
// data/ and models/cgcnn/; else Default.
func Dir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir, nil
	}
	if wd, err := os.Getwd(); err == nil {
		if dev, ok := besideRepository(wd); ok {
			return dev, nil
		}
	}
	return Default()
}

// Find is Dir (the name the demo and benchmarks used).
func Find() (string, error) { return Dir() }

// besideRepository returns the shared folder beside the repository that
// holds dir (or beside dir itself), when it holds data.
func besideRepository(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		for _, marker := range []string{"go.mod", ".git"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				if dev := filepath.Join(filepath.Dir(d), "shared"); hasData(dev) {
					return dev, true
				}
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if dev := filepath.Join(filepath.Dir(dir), "shared"); hasData(dev) {
		return dev, true
	}
	return "", false
}

func hasData(dir string) bool { return isDir(Tables(dir)) && isDir(Models(dir)) }

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// ErrMissing is matched (errors.Is) by a MissingError.
var ErrMissing = errors.New("data missing")

// MissingError says which files a data directory lacks and how to get
// them.
type MissingError struct {
	Dir string
	// Files are the missing paths, relative to Dir, slash-separated.
	Files []string
}

func (e *MissingError) Error() string {
	const shown = 4
	what := strings.Join(e.Files, ", ")
	if len(e.Files) > shown {
		what = fmt.Sprintf("%d files (%s, …)", len(e.Files), strings.Join(e.Files[:shown], ", "))
	}
	if !isDir(e.Dir) {
		what = "everything (it does not exist)"
	}
	return fmt.Sprintf("data directory %s lacks %s: run \"crucible data pull\" to fetch the data, or set %s to a data directory",
		e.Dir, what, EnvDir)
}

// Is reports whether target is ErrMissing.
func (e *MissingError) Is(target error) bool { return target == ErrMissing }

// Require returns a *MissingError listing the paths (relative to dir,
// slash-separated) that are not regular files in dir, or nil.
func Require(dir string, paths ...string) error {
	var missing []string
	for _, p := range paths {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return &MissingError{Dir: dir, Files: missing}
	}
	return nil
}
