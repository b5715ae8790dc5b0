package surrogate

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// spaceGroups reads the space_group column of a dataset's file, per sample.
func spaceGroups(t *testing.T, dir string, ds *Dataset) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, TablesDir, ds.File))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := readTable(data, "space_group")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, len(ds.Samples))
	for i, s := range ds.Samples {
		if out[i], err = strconv.Atoi(tab.get(tab.rows[s.Rows[0]-1], "space_group")); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
