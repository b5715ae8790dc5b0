package crystal

import (
	"bytes"
	"io"

	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// Convert reads the structure in (a file, or "-" for stdin) as o says and
// returns it written in format to, or with sym a CIF in the standard
// setting of its space group (WriteSymmetrizedCIF).
func (o ReadOptions) Convert(in string, stdin io.Reader, to Format, sym *spacegroup.Options) ([]byte, error) {
	var s *Structure
	var err error
	if in == "-" {
		s, _, err = o.Read(stdin, "")
	} else {
		s, err = o.ReadFile(in)
	}
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if sym != nil {
		err = WriteSymmetrizedCIF(&buf, s, *sym)
	} else {
		err = WriteStructure(&buf, s, to, "")
	}
	return buf.Bytes(), err
}
