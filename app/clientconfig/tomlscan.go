package clientconfig

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// This file finds table headers in a TOML file without a full parser, so
// that our table can be cut out and put back textually: go-toml decodes and
// encodes but drops comments, and the rest of a person's file must stay as
// they wrote it. The input is already known to parse, so the scanner only
// has to tell headers from look-alikes inside strings and multi-line arrays.

// tomlBlock is a table header and the key/value lines under it.
type tomlBlock struct {
	key   []string // the header's dotted key
	start int      // offset of the header line
	end   int      // offset just past its last key/value line (or the header)
}

// scanTOML returns the tables of src in order; statements before the first
// header are not a block.
func scanTOML(src []byte) []tomlBlock {
	var blocks []tomlBlock
	for i := 0; i < len(src); {
		lineStart := i
		j := skipBlanks(src, i)
		switch {
		case j >= len(src) || src[j] == '\n' || src[j] == '\r' || src[j] == '#':
			i = nextLine(src, j)
		case src[j] == '[':
			key, _ := parseTOMLKey(src, skipBlanks(src, j+1+boolInt(j+1 < len(src) && src[j+1] == '[')))
			i = nextLine(src, j)
			blocks = append(blocks, tomlBlock{key: key, start: lineStart, end: i})
		default:
			i = endOfStatement(src, j)
			if len(blocks) > 0 {
				blocks[len(blocks)-1].end = i
			}
		}
	}
	return blocks
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func skipBlanks(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// nextLine returns the offset after the line break at or after i.
func nextLine(src []byte, i int) int {
	if k := bytes.IndexByte(src[i:], '\n'); k >= 0 {
		return i + k + 1
	}
	return len(src)
}

// endOfStatement returns the offset after the key/value statement starting
// at i, which may span lines inside multi-line strings and brackets.
func endOfStatement(src []byte, i int) int {
	depth := 0
	for i < len(src) {
		switch c := src[i]; {
		case c == '#':
			k := bytes.IndexByte(src[i:], '\n')
			if k < 0 {
				return len(src)
			}
			i += k // the line break is handled below
			continue
		case c == '"' || c == '\'':
			i = endOfString(src, i)
			continue
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == '\n' && depth <= 0:
			return i + 1
		}
		i++
	}
	return len(src)
}

// endOfString returns the offset after the string starting at i.
func endOfString(src []byte, i int) int {
	q := src[i]
	escapes := q == '"'
	delim := []byte{q}
	if bytes.HasPrefix(src[i:], []byte{q, q, q}) {
		delim = []byte{q, q, q}
	}
	for k := i + len(delim); k < len(src); k++ {
		if escapes && src[k] == '\\' {
			k++
			continue
		}
		if len(delim) == 1 && src[k] == '\n' {
			return k // unterminated; cannot happen in a file that parses
		}
		if bytes.HasPrefix(src[k:], delim) {
			k += len(delim)
			// A multi-line string may end with up to two more quotes.
			for n := 0; n < 2 && len(delim) == 3 && k < len(src) && src[k] == q; n++ {
				k++
			}
			return k
		}
	}
	return len(src)
}

// parseTOMLKey reads a dotted key (bare, "basic" or 'literal' parts) at i.
func parseTOMLKey(src []byte, i int) ([]string, int) {
	var parts []string
	for {
		i = skipBlanks(src, i)
		if i >= len(src) {
			return parts, i
		}
		switch src[i] {
		case '"':
			end := endOfString(src, i)
			parts = append(parts, unquoteTOML(string(src[i+1:end-1])))
			i = end
		case '\'':
			end := endOfString(src, i)
			parts = append(parts, string(src[i+1:end-1]))
			i = end
		default:
			k := i
			for k < len(src) && isBareKeyByte(src[k]) {
				k++
			}
			if k == i {
				return parts, i
			}
			parts = append(parts, string(src[i:k]))
			i = k
		}
		i = skipBlanks(src, i)
		if i >= len(src) || src[i] != '.' {
			return parts, i
		}
		i++
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// unquoteTOML decodes the escapes of a basic string's body.
func unquoteTOML(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+1+n > len(s) {
				b.WriteString(s[i-1:])
				return b.String()
			}
			r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				b.WriteString(s[i-1 : i+1])
				continue
			}
			b.WriteRune(rune(r))
			i += n
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// tomlKey writes k as a key: bare when it can be, quoted otherwise.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyByte(k[i]) {
			return config.QuoteString(k)
		}
	}
	return k
}
