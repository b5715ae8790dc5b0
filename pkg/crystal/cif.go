package crystal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadCIF is returned for CIF text that cannot be read: syntax errors
// (unterminated quotes or text fields, a tag without a value, a loop whose
// values do not fill its rows) and data blocks that lack what a structure
// needs (cell, coordinates, element symbols).
var ErrBadCIF = errors.New("bad CIF")

// CIFBlock is one data block of a CIF file: its name (after "data_"), its
// single data items and its loops. Tags are matched case-insensitively and
// with "." and "_" equivalent, so the CIF 1.1 name "_cell_length_a" and the
// DDLm/CIF2 name "_cell.length_a" are the same item.
type CIFBlock struct {
	// Name is the block code, the text after "data_" ("" for items that
	// precede any data_ header).
	Name string
	// Line is the line on which the block starts.
	Line int

	items map[string]cifValue
	loops []*cifLoop
	cols  map[string]cifColumn
	order []string // every tag, in file order
}

// cifValue is one value: the text, and whether it was quoted (or a text
// field), which distinguishes the literal string "?" from the unknown
// marker ?.
type cifValue struct {
	text   string
	quoted bool
	line   int
}

// null reports whether v is CIF's unknown (?) or inapplicable (.) marker.
func (v cifValue) null() bool { return !v.quoted && (v.text == "?" || v.text == ".") }

type cifLoop struct {
	tags   []string // normalised
	line   int
	values []cifValue // row-major: values[row*len(tags)+col]
}

func (l *cifLoop) rows() int { return len(l.values) / len(l.tags) }

type cifColumn struct {
	loop *cifLoop
	col  int
}

// normalizeCIFTag maps a tag to the form used as a key: lower case, "."
// replaced by "_".
func normalizeCIFTag(tag string) string {
	return strings.ReplaceAll(strings.ToLower(tag), ".", "_")
}

// value returns the single value of tag: a data item, or the only row of a
// looped column.
func (b *CIFBlock) value(tag string) (cifValue, bool) {
	tag = normalizeCIFTag(tag)
	if v, ok := b.items[tag]; ok {
		return v, true
	}
	if c, ok := b.cols[tag]; ok && c.loop.rows() == 1 {
		return c.loop.values[c.col], true
	}
	return cifValue{}, false
}

// column returns the values of tag: a looped column, or a single data item
// as a column of one.
func (b *CIFBlock) column(tag string) ([]cifValue, bool) {
	tag = normalizeCIFTag(tag)
	if c, ok := b.cols[tag]; ok {
		n := c.loop.rows()
		out := make([]cifValue, n)
		for r := 0; r < n; r++ {
			out[r] = c.loop.values[r*len(c.loop.tags)+c.col]
		}
		return out, true
	}
	if v, ok := b.items[tag]; ok {
		return []cifValue{v}, true
	}
	return nil, false
}

// has reports whether the block contains tag, as an item or a loop column.
func (b *CIFBlock) has(tag string) bool {
	tag = normalizeCIFTag(tag)
	_, item := b.items[tag]
	_, col := b.cols[tag]
	return item || col
}

// Value returns the text of a single-valued data item (or of a loop column
// with one row). ok is false when the tag is absent or its value is CIF's
// unknown (?) or inapplicable (.) marker.
func (b *CIFBlock) Value(tag string) (text string, ok bool) {
	v, found := b.value(tag)
	if !found || v.null() {
		return "", false
	}
	return v.text, true
}

// Column returns the texts of a looped data item (a single item is a column
// of one); unknown and inapplicable values are returned as "?" and ".".
func (b *CIFBlock) Column(tag string) ([]string, bool) {
	vs, ok := b.column(tag)
	if !ok {
		return nil, false
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.text
	}
	return out, true
}

// Tags lists the block's tags (normalised: lower case, "." as "_") in the
// order they appear.
func (b *CIFBlock) Tags() []string { return append([]string(nil), b.order...) }

// ParseCIFBlocks reads the data blocks of a CIF 1.1 file (Hall, Allen &
// Brown, Acta Cryst. A47, 655 (1991); the CIF 1.1 syntax specification):
// comments (#), data_ headers, tags with values, loop_ with any number of
// columns, values quoted with ' or " (a quote closes a string only when
// followed by whitespace, so 'O'Neil' is the string O'Neil), semicolon text
// fields, and the unknown (?) and inapplicable (.) markers. Items before the
// first data_ header form a block with an empty name. Save frames and the
// reserved words global_ and stop_ are rejected, as are duplicate tags in a
// block. Errors wrap ErrBadCIF and give the line.
func ParseCIFBlocks(data []byte) ([]*CIFBlock, error) {
	lx := newCIFLexer(data)
	var (
		blocks []*CIFBlock
		cur    *CIFBlock
	)
	block := func(line int) *CIFBlock {
		if cur == nil {
			cur = newCIFBlock("", line)
			blocks = append(blocks, cur)
		}
		return cur
	}
	tok, err := lx.next()
	for err == nil && tok.kind != cifEOF {
		switch tok.kind {
		case cifData:
			cur = newCIFBlock(tok.text, tok.line)
			blocks = append(blocks, cur)
			tok, err = lx.next()
		case cifTag:
			b := block(tok.line)
			var v cifToken
			v, err = lx.next()
			if err != nil {
				break
			}
			if v.kind != cifValueTok {
				err = fmt.Errorf("%w: line %d: tag %s has no value", ErrBadCIF, tok.line, tok.text)
				break
			}
			if err = b.addItem(tok.text, cifValue{text: v.text, quoted: v.quoted, line: tok.line}); err != nil {
				break
			}
			tok, err = lx.next()
		case cifLoopTok:
			tok, err = parseCIFLoop(lx, block(tok.line), tok.line)
		case cifValueTok:
			err = fmt.Errorf("%w: line %d: value %s is not preceded by a tag", ErrBadCIF, tok.line, cifQuote(tok.text))
		default: // save_, global_, stop_
			err = fmt.Errorf("%w: line %d: %s is not supported in a crystal structure CIF", ErrBadCIF, tok.line, cifQuote(tok.text))
		}
	}
	if err != nil {
		return nil, err
	}
	return blocks, nil
}

func newCIFBlock(name string, line int) *CIFBlock {
	return &CIFBlock{Name: name, Line: line, items: map[string]cifValue{}, cols: map[string]cifColumn{}}
}

func (b *CIFBlock) addItem(tag string, v cifValue) error {
	key := normalizeCIFTag(tag)
	if b.has(key) {
		return fmt.Errorf("%w: line %d: tag %s appears twice in data block %q", ErrBadCIF, v.line, tag, b.Name)
	}
	b.items[key] = v
	b.order = append(b.order, key)
	return nil
}

// parseCIFLoop reads the tags and values of a loop_ and returns the token
// that follows it.
func parseCIFLoop(lx *cifLexer, b *CIFBlock, line int) (cifToken, error) {
	loop := &cifLoop{line: line}
	tok, err := lx.next()
	for err == nil && tok.kind == cifTag {
		key := normalizeCIFTag(tok.text)
		if b.has(key) || slices.Contains(loop.tags, key) {
			return tok, fmt.Errorf("%w: line %d: tag %s appears twice in data block %q", ErrBadCIF, tok.line, tok.text, b.Name)
		}
		loop.tags = append(loop.tags, key)
		tok, err = lx.next()
	}
	if err != nil {
		return tok, err
	}
	if len(loop.tags) == 0 {
		return tok, fmt.Errorf("%w: line %d: loop_ has no tags", ErrBadCIF, line)
	}
	for err == nil && tok.kind == cifValueTok {
		loop.values = append(loop.values, cifValue{text: tok.text, quoted: tok.quoted, line: tok.line})
		tok, err = lx.next()
	}
	if err != nil {
		return tok, err
	}
	if len(loop.values)%len(loop.tags) != 0 {
		return tok, fmt.Errorf("%w: line %d: loop of %d tags (%s, …) has %d values, not a whole number of rows",
			ErrBadCIF, line, len(loop.tags), loop.tags[0], len(loop.values))
	}
	b.loops = append(b.loops, loop)
	for i, t := range loop.tags {
		b.cols[t] = cifColumn{loop: loop, col: i}
	}
	b.order = append(b.order, loop.tags...)
	return tok, nil
}

// cifQuote quotes s for an error message, cut to a readable length.
func cifQuote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}

type cifTokenKind int

const (
	cifEOF cifTokenKind = iota
	cifValueTok
	cifTag
	cifData
	cifLoopTok
	cifReserved // save_, global_, stop_
)

type cifToken struct {
	kind   cifTokenKind
	text   string
	quoted bool
	line   int
}

// cifLexer splits CIF text into tokens. It works on the raw bytes: CIF 1.1
// is ASCII, and any other byte is treated as part of a token.
type cifLexer struct {
	src  string
	pos  int
	line int
}

func newCIFLexer(data []byte) *cifLexer {
	s := string(data)
	s = strings.TrimPrefix(s, "\ufeff") // UTF-8 byte-order mark
	return &cifLexer{src: s, line: 1}
}

func isCIFSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// atLineStart reports whether pos is the first column of a line.
func (lx *cifLexer) atLineStart(pos int) bool {
	return pos == 0 || lx.src[pos-1] == '\n' || lx.src[pos-1] == '\r'
}

// newline consumes one line ending (\n, \r\n or \r) at pos.
func (lx *cifLexer) newline() {
	if lx.src[lx.pos] == '\r' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '\n' {
		lx.pos++
	}
	lx.pos++
	lx.line++
}

// skipBlank skips whitespace and comments. A comment starts with '#'
// anywhere a token could start and runs to the end of the line.
func (lx *cifLexer) skipBlank() {
	for lx.pos < len(lx.src) {
		switch c := lx.src[lx.pos]; {
		case c == '\n' || c == '\r':
			lx.newline()
		case isCIFSpace(c):
			lx.pos++
		case c == '#':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' && lx.src[lx.pos] != '\r' {
				lx.pos++
			}
		default:
			return
		}
	}
}

func (lx *cifLexer) next() (cifToken, error) {
	lx.skipBlank()
	if lx.pos == len(lx.src) {
		return cifToken{kind: cifEOF, line: lx.line}, nil
	}
	start, line := lx.pos, lx.line
	c := lx.src[lx.pos]
	switch {
	case c == ';' && lx.atLineStart(lx.pos):
		return lx.textField()
	case c == '\'' || c == '"':
		// A quoted string ends at the first matching quote followed by
		// whitespace or the end of the text; it may not span lines.
		for i := lx.pos + 1; i < len(lx.src); i++ {
			d := lx.src[i]
			if d == '\n' || d == '\r' {
				break
			}
			if d == c && (i+1 == len(lx.src) || isCIFSpace(lx.src[i+1])) {
				lx.pos = i + 1
				return cifToken{kind: cifValueTok, text: lx.src[start+1 : i], quoted: true, line: line}, nil
			}
		}
		return cifToken{}, fmt.Errorf("%w: line %d: quoted string %s is not closed on its line", ErrBadCIF, line, cifQuote(lx.restOfLine(start)))
	}
	for lx.pos < len(lx.src) && !isCIFSpace(lx.src[lx.pos]) {
		lx.pos++
	}
	text := lx.src[start:lx.pos]
	tok := cifToken{kind: cifValueTok, text: text, line: line}
	lower := strings.ToLower(text)
	switch {
	case text[0] == '_':
		tok.kind = cifTag
	case strings.HasPrefix(lower, "data_"):
		tok.kind = cifData
		tok.text = text[len("data_"):]
	case lower == "loop_":
		tok.kind = cifLoopTok
	case strings.HasPrefix(lower, "save_") || lower == "global_" || lower == "stop_":
		tok.kind = cifReserved
	}
	return tok, nil
}

// textField reads a semicolon-delimited text field: from a ';' in the first
// column to the next line that starts with ';'. The value is the text in
// between with surrounding whitespace trimmed.
func (lx *cifLexer) textField() (cifToken, error) {
	line := lx.line
	lx.pos++ // opening ';'
	start := lx.pos
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if c == '\n' || c == '\r' {
			lx.newline()
			if lx.pos < len(lx.src) && lx.src[lx.pos] == ';' {
				text := lx.src[start:lx.pos]
				lx.pos++ // closing ';'
				return cifToken{kind: cifValueTok, text: strings.TrimSpace(text), quoted: true, line: line}, nil
			}
			continue
		}
		lx.pos++
	}
	return cifToken{}, fmt.Errorf("%w: line %d: text field (;) is not closed", ErrBadCIF, line)
}

func (lx *cifLexer) restOfLine(from int) string {
	end := from
	for end < len(lx.src) && lx.src[end] != '\n' && lx.src[end] != '\r' {
		end++
	}
	return lx.src[from:end]
}
