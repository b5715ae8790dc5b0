package results

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// TestWriteCSVSpaceGroup: each row carries its evaluation's space group,
// empty cells for one without.
func TestWriteCSVSpaceGroup(t *testing.T) {
	evs := []*messages.Evaluation{
		{ID: "a", Candidate: messages.Candidate{Formula: "NaCl"}, Valid: true, SpaceGroup: &spacegroup.Name{Number: 225, Symbol: "Fm-3m"}},
		{ID: "b", Candidate: messages.Candidate{Formula: "Na2Cl"}},
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, evs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v:\n%s", len(rows), err, buf.String())
	}
	num, sym := slices.Index(rows[0], "space_group"), slices.Index(rows[0], "space_group_symbol")
	if num < 0 || sym < 0 {
		t.Fatalf("header %v has no space-group columns", rows[0])
	}
	if rows[1][num] != "225" || rows[1][sym] != "Fm-3m" || rows[2][num] != "" || rows[2][sym] != "" {
		t.Errorf("space groups %q %q, %q %q", rows[1][num], rows[1][sym], rows[2][num], rows[2][sym])
	}
}

// TestWriteStructuresSymmetrized: --symmetrize writes each structure's CIF
// in its space group's standard setting, after its candidate line; it is
// refused for another format.
func TestWriteStructuresSymmetrized(t *testing.T) {
	nacl := crystaltest.Build(t, "rocksalt", "NaCl")
	evs := []*messages.Evaluation{{ID: "a", Candidate: messages.Candidate{Formula: "NaCl", Structure: messages.StructureOf(nacl)}}}
	var buf bytes.Buffer
	if err := WriteStructures(&buf, "", crystal.FormatCIF, evs, true); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"# candidate a\n", "_symmetry_Int_Tables_number   225"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s, err := crystal.ParseCIF(buf.Bytes())
	if err != nil || s.NumSites() != 8 {
		t.Errorf("read back: %v, %v; want the 8 sites of the conventional cell", s, err)
	}
	if err := WriteStructures(&buf, "", crystal.FormatXYZ, evs, true); err == nil {
		t.Error("a symmetrised XYZ was written")
	}
}
