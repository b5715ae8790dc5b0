package crystal

import (
	"strings"
	"testing"
)

func TestFileStems(t *testing.T) {
	if got := FileStems([]string{"a/x.cif", "b/x.json", "POSCAR", "y.cif"}); strings.Join(got, " ") != "x-1 x-2 POSCAR y" {
		t.Errorf("file stems %v", got)
	}
}
