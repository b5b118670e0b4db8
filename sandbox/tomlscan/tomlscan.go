package tomlscan

import (
	"bytes"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Kind is what a statement is.
type Kind int

const (
	// Table is a [table] header.
	Table Kind = iota + 1
	// ArrayTable is an [[array.of.tables]] header.
	ArrayTable
	// KeyValue is a key = value pair; its value may span several lines.
	KeyValue
)

// Statement is one table header or key/value pair.
type Statement struct {
	Kind Kind
	// Path is the statement's key, decoded (quotes and escapes removed),
	// one element per dotted part: the header's for a table, the pair's
	// own (relative to its table) for a key/value pair.
	Path []string
	// Table is the path of the table a key/value pair is in, joined with
	// dots ("" for the top level, and for a header itself).
	Table string
	// InArrayTable is set for a key/value pair under an [[array table]]
	// header, whose Table names the array, not one table.
	InArrayTable bool
	// Key is Path joined with dots.
	Key string
	// Start is the offset of the start of the statement's (first) line;
	// End is the offset just past the newline that ends its (last) line,
	// after any comment on it.
	Start, End int
	// ValStart and ValEnd delimit a key/value pair's value.
	ValStart, ValEnd int
}

// Scan returns the table headers and key/value pairs of src in order.
// Comments and blank lines are not statements; they lie between them. A
// document that does not parse is an error (go-toml's, with its position).
func Scan(src []byte) ([]Statement, error) {
	var out []Statement
	p := unstable.Parser{KeepComments: true}
	p.Reset(src)
	table, inArray := "", false
	for p.NextExpression() {
		e := p.Expression()
		var s Statement
		var keys unstable.Iterator
		last := 0 // offset past the last byte of the statement's text
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			s.Kind = Table
			if e.Kind == unstable.ArrayTable {
				s.Kind = ArrayTable
			}
			keys = e.Key()
		case unstable.KeyValue:
			s.Kind = KeyValue
			s.Table, s.InArrayTable = table, inArray
			keys = e.Key()
			s.ValEnd = int(e.Raw.Offset + e.Raw.Length)
			last = s.ValEnd
		default:
			continue // a comment on a line of its own
		}
		first, keyEnd := -1, 0
		for keys.Next() {
			k := keys.Node()
			if first < 0 {
				first = int(k.Raw.Offset)
			}
			s.Path = append(s.Path, string(k.Data))
			keyEnd = max(keyEnd, int(k.Raw.Offset+k.Raw.Length))
		}
		last = max(last, keyEnd)
		s.Key = strings.Join(s.Path, ".")
		if s.Kind == KeyValue {
			// The value starts after the last key part, the spaces and the '='.
			i := bytes.IndexByte(src[keyEnd:], '=') + keyEnd + 1
			for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
				i++
			}
			s.ValStart = i
		} else {
			table, inArray = s.Key, s.Kind == ArrayTable
		}
		s.Start = bytes.LastIndexByte(src[:first], '\n') + 1
		// The rest of the last line is spaces, a closing bracket or a
		// comment, none of which holds a newline.
		if n := bytes.IndexByte(src[last:], '\n'); n >= 0 {
			s.End = last + n + 1
		} else {
			s.End = len(src)
		}
		out = append(out, s)
	}
	return out, p.Error()
}
