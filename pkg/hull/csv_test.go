package hull

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeCSV(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.csv")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadEntriesCSV(t *testing.T) {
	p := writeCSV(t, "\ufeffformula, id ,e_form_per_atom,note\nLi2O,li2o,-2.0,x\nO2, o ,0,\nLi2O,li2o,-2,repeated\n")
	got, err := ReadEntriesCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "li2o" || got[0].Formula != "Li2O" || got[0].EnergyPerAtom != -2 || got[0].Line != 2 ||
		got[1].ID != "o" || got[1].Line != 3 || got[1].Composition.NumAtoms() != 2 {
		t.Errorf("entries %+v", got)
	}
	qs, err := ReadQueriesCSV(writeCSV(t, "formula,e_form_per_atom\nLi3O2,-1.9\nFeO,-0.5\n"))
	if err != nil || len(qs) != 2 || qs[1].Formula != "FeO" || qs[1].EnergyPerAtom != -0.5 {
		t.Errorf("queries %+v, %v", qs, err)
	}
}

// Bad input is an error naming the file and line, never a silent drop.
func TestReadCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
		queries             bool
	}{
		{"bad formula", "id,formula,e_form_per_atom\na,Li2O,-2\nb,Xq2O,-1\n", ":3: unknown element", false},
		{"bad energy", "id,formula,e_form_per_atom\na,Li2O,abc\n", `:2: e_form_per_atom "abc" is not a finite number`, false},
		{"infinite energy", "id,formula,e_form_per_atom\na,Li2O,-Inf\n", `:2: e_form_per_atom "-Inf"`, false},
		{"empty id", "id,formula,e_form_per_atom\n,Li2O,-1\n", ":2: empty id", false},
		{"conflicting id", "id,formula,e_form_per_atom\na,Li2O,-2\nb,O,0\na,Li2O2,-1\n", `:4: duplicate entry id: "a" already used on line 2`, false},
		{"missing column", "id,formula\na,Li2O\n", `:1: header "id,formula" has no column "e_form_per_atom"`, false},
		{"wrong field count", "id,formula,e_form_per_atom\na,Li2O,-2,7\n", ":2: wrong number of fields", false},
		{"no entries", "id,formula,e_form_per_atom\n", ": no entries", false},
		{"empty file", "", ": empty file", false},
		{"bad query", "formula,e_form_per_atom\nLi2O,-1\nLi(O,-1\n", ":3: bad formula", true},
	} {
		p := writeCSV(t, tc.content)
		var err error
		if tc.queries {
			_, err = ReadQueriesCSV(p)
		} else {
			_, err = ReadEntriesCSV(p)
		}
		if err == nil || !strings.Contains(err.Error(), p+tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, p+tc.want)
		}
	}
	_, err := ReadEntriesCSV(writeCSV(t, "id,formula,e_form_per_atom\na,Li2O,-2\na,Li2O2,-1\n"))
	if !errors.Is(err, ErrDuplicateID) {
		t.Errorf("conflicting id: %v, want ErrDuplicateID", err)
	}
}
