package report

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteFiles writes the HTML report of d to out and, with png, its charts
// beside it (<out without extension>-<chart>.png), and returns the files
// written, the report first.
func WriteFiles(out string, d *Data, png bool, generated time.Time) ([]string, error) {
	f, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	if err := WriteHTML(f, d, generated); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if !png {
		return []string{out}, nil
	}
	files, err := WritePNG(strings.TrimSuffix(out, filepath.Ext(out)), Charts(d))
	return append([]string{out}, files...), err
}
