package crystal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FileStems names the output files of each input file: its base name
// without extension, made unique with its position (from 1) when shared.
func FileStems(files []string) []string {
	names := make([]string, len(files))
	count := map[string]int{}
	for i, f := range files {
		base := filepath.Base(f)
		names[i] = strings.TrimSuffix(base, filepath.Ext(base))
		count[names[i]]++
	}
	for i := range names {
		if count[names[i]] > 1 {
			names[i] = fmt.Sprintf("%s-%d", names[i], i+1)
		}
	}
	return names
}

// WriteFiles writes st as DIR/NAME plus each format's extension, labelled
// with label where the format has room (WriteStructure), and returns the
// paths.
func WriteFiles(dir, name, label string, st *Structure, formats ...Format) ([]string, error) {
	var paths []string
	for _, f := range formats {
		path := filepath.Join(dir, name+f.Extension())
		fh, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		err = WriteStructure(fh, st, f, label)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
