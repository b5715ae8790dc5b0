package crystal

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// r3mHexOps are the twelve coset representatives of R -3 m (hexagonal
// axes) as ITA lists them for No. 166; the test adds the centring
// translations (0,0,0), (2/3,1/3,1/3), (1/3,2/3,2/3) itself.
var r3mHexOps = []string{
	"x, y, z", "-y, x-y, z", "-x+y, -x, z", "y, x, -z", "x-y, -y, -z", "-x, -x+y, -z",
	"-x, -y, -z", "y, -x+y, -z", "x-y, x, -z", "-y, -x, z", "-x+y, y, z", "x, x-y, z",
}

// bi2te3WithOps writes symbol_bi2te3_hm.cif's structure with its 36 operations
// listed.
func bi2te3WithOps(t *testing.T) []byte {
	var b strings.Builder
	b.WriteString("data_Bi2Te3_ops\n_cell_length_a 4.386\n_cell_length_b 4.386\n_cell_length_c 30.497\n_cell_angle_gamma 120\nloop_\n_symmetry_equiv_pos_as_xyz\n")
	for _, c := range [][3]string{{"", "", ""}, {"+2/3", "+1/3", "+1/3"}, {"+1/3", "+2/3", "+2/3"}} {
		for _, op := range r3mHexOps {
			parts := strings.Split(op, ", ")
			for i := range parts {
				parts[i] += c[i]
			}
			b.WriteString("'" + strings.Join(parts, ", ") + "'\n")
		}
	}
	b.WriteString(atomLoopHeader + "Bi1 0 0 0.4001\nTe1 0 0 0\nTe2 0 0 0.7877\n")
	return []byte(b.String())
}

// TestParseCIFBySymbol reads CIFs that give only a space-group symbol or
// number and checks that they expand to the same sites as the same
// structure with its operations listed (or written out in P 1).
func TestParseCIFBySymbol(t *testing.T) {
	tests := []struct {
		name      string
		bySymbol  []byte
		explicit  []byte
		wantSites int
	}{
		{"rutile by HM", readTestdata(t, "cif", "symbol_rutile_hm.cif"), readTestdata(t, "cif", "rutile_symop.cif"), 6},
		{"NaCl by number", readTestdata(t, "cif", "symbol_nacl_number.cif"), readTestdata(t, "cif", "symbol_nacl_p1.cif"), 8},
		{"P21/c by Hall", readTestdata(t, "cif", "symbol_p21c_hall.cif"), readTestdata(t, "cif", "symbol_p21c_ops.cif"), 16},
		{"P21/c by short HM", readTestdata(t, "cif", "symbol_p21c_hm.cif"), readTestdata(t, "cif", "symbol_p21c_ops.cif"), 16},
		{"R-3m hexagonal axes", readTestdata(t, "cif", "symbol_bi2te3_hm.cif"), bi2te3WithOps(t), 15},
		{"R-3m default axes", readTestdata(t, "cif", "symbol_bi2te3_hm_default.cif"), bi2te3WithOps(t), 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCIF(tc.bySymbol)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ParseCIF(tc.explicit)
			if err != nil {
				t.Fatal(err)
			}
			if got.NumSites() != tc.wantSites {
				t.Errorf("%d sites, want %d", got.NumSites(), tc.wantSites)
			}
			requireSameLattice(t, got.Lattice, want.Lattice, 1e-9)
			requireSitesMatch(t, got, want, 1e-9)
		})
	}
}

// TestParseCIFBySymbolErrors checks that unknown or inconsistent symbols are
// rejected with ErrNoSymmetryOperations naming them.
func TestParseCIFBySymbolErrors(t *testing.T) {
	tests := []struct {
		name, header, mention string
	}{
		{"unknown HM", "_symmetry_space_group_name_H-M 'P 5 m m'\n", "P 5 m m"},
		{"malformed Hall", "_space_group_name_Hall 'P 7'\n", "P 7"},
		{"number out of range", "_space_group_IT_number 231\n", "231"},
		{"fractional number", "_symmetry_Int_Tables_number 2.5\n", "2.5"},
		{"number disagrees with symbol", "_symmetry_space_group_name_H-M 'P m -3 m'\n_symmetry_Int_Tables_number 225\n", "225"},
		{"unknown origin choice", "_symmetry_space_group_name_H-M 'F d -3 m:3'\n", "F d -3 m:3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseCIF([]byte(cifWithCell(tc.header + atomLoopHeader + "Na 0 0 0\n")))
			if !errors.Is(err, ErrNoSymmetryOperations) {
				t.Fatalf("got %v, %v; want ErrNoSymmetryOperations", s, err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %q", err, tc.mention)
			}
		})
	}
}

// TestParseCIFBySymbolGolden strips the operations loop from the COD CIFs
// of the golden set (which list their operations) and checks that the
// symbol alone gives the same structure.
func TestParseCIFBySymbolGolden(t *testing.T) {
	dir := testbed.DataPath(t, "golden", "cgcnn", "cifs")
	files, _ := filepath.Glob(filepath.Join(dir, "cod-*.cif"))
	if len(files) == 0 {
		t.Skip("no golden COD CIFs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ParseCIF(data)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := ParseCIFBlocks(data)
			if err != nil {
				t.Fatal(err)
			}
			stripped := stripSymOps(t, string(data), blocks)
			got, err := ParseCIF([]byte(stripped))
			if err != nil {
				t.Fatal(err)
			}
			requireSitesMatch(t, got, want, 1e-6)
		})
	}
}

// stripSymOps removes the rows of the operations loop by renaming its tags
// to an unknown item, so the reader must fall back on the symbol.
func stripSymOps(t *testing.T, text string, blocks []*CIFBlock) string {
	t.Helper()
	found := false
	for _, tag := range cifSymOpTags {
		for _, b := range blocks {
			if b.has(tag) {
				found = true
			}
		}
	}
	if !found {
		t.Skip("lists no operations")
	}
	re := regexp.MustCompile(`(?im)^(\s*)_(symmetry_equiv_pos|space_group_symop)([._])`)
	return re.ReplaceAllString(text, "${1}_crucible_ignored_${2}${3}")
}
