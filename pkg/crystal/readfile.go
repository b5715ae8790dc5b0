package crystal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrUnknownFormat is returned for data that is not a CIF, a pymatgen
// Structure dict or a candidate answer.
var ErrUnknownFormat = errors.New("unknown structure format")

// MaxStructureFileSize is the largest file ReadFile reads (64 MiB): ample for any
// CIF of an inorganic crystal, small enough that hostile input cannot
// exhaust memory.
const MaxStructureFileSize = 64 << 20

// FileFormat is a structure file format.
type FileFormat int

// The formats ParseStructure recognises.
const (
	FormatUnknown       FileFormat = iota
	FormatCIF                      // CIF 1.1 (ParseCIF)
	FormatPymatgenJSON             // pymatgen Structure.as_dict() (ParsePymatgenJSON)
	FormatCandidateJSON            // {formula, lattice, species, coords} (ParseCandidateJSON)
)

// String names the format.
func (f FileFormat) String() string {
	switch f {
	case FormatCIF:
		return "CIF"
	case FormatPymatgenJSON:
		return "pymatgen JSON"
	case FormatCandidateJSON:
		return "candidate JSON"
	}
	return "unknown"
}

// DetectFormat recognises a format from content, not from a file name: a
// JSON object with "@class", "sites" or a lattice with a "matrix" and sites
// is a pymatgen Structure; one with "species" and "coords" is a candidate;
// text with a data_ header or a _cell_ or _atom_site_ tag at the start of a
// line is a CIF.
func DetectFormat(data []byte) FileFormat {
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
	for _, line := range strings.Split(string(trimmed), "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		if strings.HasPrefix(l, "data_") || strings.HasPrefix(l, "_cell_") || strings.HasPrefix(l, "_cell.") ||
			strings.HasPrefix(l, "_atom_site_") || strings.HasPrefix(l, "_atom_site.") {
			return FormatCIF
		}
	}
	return FormatUnknown
}

// ParseStructure reads a structure in any format DetectFormat recognises.
func ParseStructure(data []byte) (*Structure, error) {
	switch f := DetectFormat(data); f {
	case FormatCIF:
		return ParseCIF(data)
	case FormatPymatgenJSON:
		return ParsePymatgenJSON(data)
	case FormatCandidateJSON:
		_, s, err := ParseCandidateJSON(data)
		return s, err
	}
	return nil, fmt.Errorf("%w: not a CIF (data_ block), pymatgen Structure JSON (lattice.matrix, sites) or candidate JSON (species, coords)", ErrUnknownFormat)
}

// ReadFile reads a structure from a file, recognising its format from the
// content (DetectFormat). Errors name the file.
func ReadFile(path string) (*Structure, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read structure: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxStructureFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read structure %s: %w", path, err)
	}
	if len(data) > MaxStructureFileSize {
		return nil, fmt.Errorf("read structure %s: file larger than %d MiB", path, MaxStructureFileSize>>20)
	}
	s, err := ParseStructure(data)
	if err != nil {
		return nil, fmt.Errorf("read structure %s (%s): %w", path, DetectFormat(data), err)
	}
	return s, nil
}
