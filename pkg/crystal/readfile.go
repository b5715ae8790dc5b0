package crystal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrUnknownFormat is returned for data in no format Crucible reads, and
// for a format name it does not know.
var ErrUnknownFormat = errors.New("unknown structure format")

// MaxStructureFileSize is the largest file ReadFile reads (64 MiB): ample for any
// structure file of an inorganic crystal, small enough that hostile input
// cannot exhaust memory.
const MaxStructureFileSize = 64 << 20

// Format is a structure file format.
type Format int

// The formats Crucible reads; all but FormatCandidateJSON are also written
// (WriteStructure).
const (
	FormatUnknown       Format = iota
	FormatCIF                  // CIF 1.1 (ParseCIF, WriteCIF)
	FormatPymatgenJSON         // pymatgen Structure.as_dict() (ParsePymatgenJSON, MarshalPymatgenJSON)
	FormatCandidateJSON        // {formula, lattice, species, coords} (ParseCandidateJSON)
	FormatPOSCAR               // VASP POSCAR or CONTCAR (ParsePOSCAR, WritePOSCAR)
	FormatXYZ                  // extended XYZ (ParseXYZ, WriteXYZ)
)

// WriteFormats are the formats WriteStructure writes, in the order the
// command line lists them.
var WriteFormats = []Format{FormatCIF, FormatPOSCAR, FormatPymatgenJSON, FormatXYZ}

// String names the format for people.
func (f Format) String() string {
	switch f {
	case FormatCIF:
		return "CIF"
	case FormatPymatgenJSON:
		return "pymatgen JSON"
	case FormatCandidateJSON:
		return "candidate JSON"
	case FormatPOSCAR:
		return "POSCAR"
	case FormatXYZ:
		return "extended XYZ"
	}
	return "unknown"
}

// Name is the format's name on the command line (ParseFormat reads it).
func (f Format) Name() string {
	switch f {
	case FormatCIF:
		return "cif"
	case FormatPymatgenJSON:
		return "json"
	case FormatCandidateJSON:
		return "candidate"
	case FormatPOSCAR:
		return "poscar"
	case FormatXYZ:
		return "xyz"
	}
	return "unknown"
}

// Extension is the file name extension of the format, with its dot
// (".vasp" for POSCAR, which pymatgen, ASE and VESTA recognise).
func (f Format) Extension() string {
	switch f {
	case FormatCIF:
		return ".cif"
	case FormatPymatgenJSON, FormatCandidateJSON:
		return ".json"
	case FormatPOSCAR:
		return ".vasp"
	case FormatXYZ:
		return ".xyz"
	}
	return ""
}

// ParseFormat reads a format name, in any case: cif; poscar (or vasp,
// contcar); json (or pymatgen); xyz (or extxyz); candidate.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "cif":
		return FormatCIF, nil
	case "poscar", "vasp", "contcar":
		return FormatPOSCAR, nil
	case "json", "pymatgen":
		return FormatPymatgenJSON, nil
	case "xyz", "extxyz":
		return FormatXYZ, nil
	case "candidate":
		return FormatCandidateJSON, nil
	}
	return FormatUnknown, fmt.Errorf("%w: %q (want cif, poscar, json or xyz)", ErrUnknownFormat, name)
}

// ParseWriteFormat reads the name of a format WriteStructure writes (one
// of WriteFormats; ParseFormat's names).
func ParseWriteFormat(name string) (Format, error) {
	f, err := ParseFormat(name)
	if err != nil {
		return 0, err
	}
	for _, w := range WriteFormats {
		if f == w {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w: %s is read, not written (write cif, poscar, json or xyz)", ErrUnknownFormat, name)
}

// FormatOfFileName recognises a format from a file name: the extension
// (.cif; .vasp or .poscar; .xyz or .extxyz; .json, pymatgen or candidate as
// the content says) or a VASP name (POSCAR…, CONTCAR…, in any case). Other
// names are FormatUnknown.
func FormatOfFileName(path string) Format {
	base := strings.ToLower(filepath.Base(path))
	switch filepath.Ext(base) {
	case ".cif":
		return FormatCIF
	case ".vasp", ".poscar":
		return FormatPOSCAR
	case ".xyz", ".extxyz":
		return FormatXYZ
	case ".json":
		return FormatPymatgenJSON
	}
	if strings.HasPrefix(base, "poscar") || strings.HasPrefix(base, "contcar") {
		return FormatPOSCAR
	}
	return FormatUnknown
}

// DetectFileFormat recognises the format of a file: by its name
// (FormatOfFileName), else by its content (DetectFormat). A .json file is
// a candidate when its content says so, else pymatgen JSON.
func DetectFileFormat(path string, data []byte) Format {
	f := FormatOfFileName(path)
	switch f {
	case FormatUnknown:
		return DetectFormat(data)
	case FormatPymatgenJSON:
		if DetectFormat(data) == FormatCandidateJSON {
			return FormatCandidateJSON
		}
	}
	return f
}

// DetectFormat recognises a format from content, not from a file name: a
// JSON object with "@class", "sites" or a lattice with a "matrix" and sites
// is a pymatgen Structure; one with "species" and "coords" is a candidate;
// text whose line 2 is one or three numbers and lines 3–5 three numbers
// each is a POSCAR; text whose first line is one integer is XYZ; text with
// a data_ header or a _cell_ or _atom_site_ tag at the start of a line is a
// CIF.
func DetectFormat(data []byte) Format {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\ufeff")))
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if json.Unmarshal(trimmed, &obj) != nil {
			return FormatUnknown
		}
		_, class := obj["@class"]
		_, sites := obj["sites"]
		_, species := obj["species"]
		_, coords := obj["coords"]
		switch {
		case class || sites:
			return FormatPymatgenJSON
		case species && coords:
			return FormatCandidateJSON
		}
		return FormatUnknown
	}
	lines := splitLines(data)
	switch {
	case looksLikePOSCAR(lines):
		return FormatPOSCAR
	case len(lines) > 1 && isSingleInteger(lines[0]):
		return FormatXYZ
	}
	for _, line := range lines {
		l := strings.ToLower(strings.TrimSpace(line))
		if strings.HasPrefix(l, "data_") || strings.HasPrefix(l, "_cell_") || strings.HasPrefix(l, "_cell.") ||
			strings.HasPrefix(l, "_atom_site_") || strings.HasPrefix(l, "_atom_site.") {
			return FormatCIF
		}
	}
	return FormatUnknown
}

// looksLikePOSCAR reports whether line 2 is one or three numbers and lines
// 3–5 start with three numbers, as in a POSCAR and in nothing else
// Crucible reads.
func looksLikePOSCAR(lines []string) bool {
	if len(lines) < 7 {
		return false
	}
	leadingNumbers := func(line string) int {
		n := 0
		for _, f := range strings.Fields(line) {
			if _, err := parseFortranFloat(f); err != nil {
				break
			}
			n++
		}
		return n
	}
	if n := leadingNumbers(lines[1]); n != 1 && n != 3 {
		return false
	}
	for _, l := range lines[2:5] {
		if leadingNumbers(l) < 3 {
			return false
		}
	}
	return true
}

// isSingleInteger reports whether line is one integer and nothing else.
func isSingleInteger(line string) bool {
	f := strings.Fields(line)
	if len(f) != 1 {
		return false
	}
	_, err := strconv.Atoi(f[0])
	return err == nil
}

// ReadOptions adjust how a structure is read.
type ReadOptions struct {
	// Format is the format of the data; FormatUnknown recognises it from
	// the name and content (DetectFileFormat).
	Format Format
	// Species are the elements of a VASP 4 POSCAR's count groups
	// (POSCAROptions.Species).
	Species []Element
}

// Parse reads a structure from data; name, a file name or "", helps
// recognise the format. It returns the format it read.
func (o ReadOptions) Parse(data []byte, name string) (*Structure, Format, error) {
	f := o.Format
	if f == FormatUnknown {
		f = DetectFileFormat(name, data)
	}
	var s *Structure
	var err error
	switch f {
	case FormatCIF:
		s, err = ParseCIF(data)
	case FormatPymatgenJSON:
		s, err = ParsePymatgenJSON(data)
	case FormatCandidateJSON:
		_, s, err = ParseCandidateJSON(data)
	case FormatPOSCAR:
		s, err = POSCAROptions{Species: o.Species}.Parse(data)
	case FormatXYZ:
		s, err = ParseXYZ(data)
	default:
		err = fmt.Errorf("%w: not a CIF (data_ block), POSCAR (scale and lattice on lines 2–5), extended XYZ (atom count, "+
			"Lattice=\"…\"), pymatgen Structure JSON (lattice.matrix, sites) or candidate JSON (species, coords)", ErrUnknownFormat)
	}
	if err != nil {
		return nil, f, err
	}
	return s, f, nil
}

// ParseStructure reads a structure in any format DetectFormat recognises.
func ParseStructure(data []byte) (*Structure, error) {
	s, _, err := ReadOptions{}.Parse(data, "")
	return s, err
}

// ReadFile reads a structure from a file, recognising its format from its
// name and content (DetectFileFormat). Errors name the file and format.
func ReadFile(path string) (*Structure, error) {
	return ReadOptions{}.ReadFile(path)
}

// ReadFile reads a structure from a file with the options.
func (o ReadOptions) ReadFile(path string) (*Structure, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read structure: %w", err)
	}
	defer file.Close()
	s, _, err := o.Read(file, path)
	return s, err
}

// Read reads a structure of at most MaxStructureFileSize bytes from r; name,
// a file name or "" (standard input), helps recognise the format and names
// the source in errors. It returns the format it read.
func (o ReadOptions) Read(r io.Reader, name string) (*Structure, Format, error) {
	label := name
	if label == "" {
		label = "(standard input)"
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxStructureFileSize+1))
	if err != nil {
		return nil, FormatUnknown, fmt.Errorf("read structure %s: %w", label, err)
	}
	if len(data) > MaxStructureFileSize {
		return nil, FormatUnknown, fmt.Errorf("read structure %s: larger than %d MiB", label, MaxStructureFileSize>>20)
	}
	s, f, err := o.Parse(data, name)
	if err != nil {
		return nil, f, fmt.Errorf("read structure %s (%s): %w", label, f, err)
	}
	return s, f, nil
}

// WriteStructure writes s in format f: CIF (WriteCIF, P1), POSCAR
// (WritePOSCAR), pymatgen JSON (MarshalPymatgenJSON, one line) or extended
// XYZ (WriteXYZ). A title, when not empty, labels the structure where the
// format has room: a "# title" comment line before the CIF, the POSCAR's
// comment line, the XYZ's title key; pymatgen JSON has no such field.
func WriteStructure(w io.Writer, s *Structure, f Format, title string) error {
	switch f {
	case FormatCIF:
		if err := checkWritable(s); err != nil {
			return fmt.Errorf("write CIF: %w", err)
		}
		if title != "" {
			if _, err := fmt.Fprintf(w, "# %s\n", strings.Join(strings.Fields(title), " ")); err != nil {
				return fmt.Errorf("write CIF: %w", err)
			}
		}
		return WriteCIF(w, s)
	case FormatPOSCAR:
		return WritePOSCAR(w, s, title)
	case FormatPymatgenJSON:
		if err := checkWritable(s); err != nil {
			return fmt.Errorf("write pymatgen JSON: %w", err)
		}
		data, err := MarshalPymatgenJSON(s)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(data, '\n')); err != nil {
			return fmt.Errorf("write pymatgen JSON: %w", err)
		}
		return nil
	case FormatXYZ:
		return WriteXYZ(w, s, title)
	}
	return fmt.Errorf("%w: cannot write %s (want cif, poscar, json or xyz)", ErrUnknownFormat, f)
}

// ParseConversion reads the flags of "crucible convert": the output
// format (to, else the format of out's name), the input format (from,
// empty to recognise it) and the species of a VASP 4 POSCAR ("Fe,O").
func ParseConversion(to, from, out, species string) (Format, ReadOptions, error) {
	var opt ReadOptions
	var target Format
	var err error
	switch {
	case to != "":
		if target, err = ParseWriteFormat(to); err != nil {
			return 0, opt, fmt.Errorf("--to: %w", err)
		}
	case out != "" && out != "-" && FormatOfFileName(out) != FormatUnknown:
		target = FormatOfFileName(out)
	default:
		return 0, opt, errors.New("--to is required (cif, poscar, json or xyz) unless --out names a .cif, .vasp, POSCAR, .json or .xyz file")
	}
	if from != "" {
		if opt.Format, err = ParseFormat(from); err != nil {
			return 0, opt, fmt.Errorf("--from: %w", err)
		}
	}
	if species != "" {
		for _, sym := range strings.FieldsFunc(species, func(r rune) bool { return r == ',' || r == ' ' }) {
			e, err := ElementBySymbol(sym)
			if err != nil {
				return 0, opt, fmt.Errorf("--species: %w", err)
			}
			opt.Species = append(opt.Species, e)
		}
	}
	return target, opt, nil
}
