package config

import (
	"strings"
)

// setKey returns data with key in [table] set to value (a TOML value as
// text). An existing value is replaced where it stands, whatever follows it
// on the line (a comment) kept; a missing key is added after the last
// key of its table; a missing table is added at the end.
func setKey(data []byte, table, key, value string) []byte {
	src := string(data)
	lines := scanDoc(src)
	tableEnd := -1 // offset after the last key line of table
	for _, l := range lines {
		switch {
		case l.header != "":
			if l.header == table && tableEnd < 0 {
				tableEnd = l.end
			}
		case l.key == "":
		case l.table == table && l.key == key, l.table == "" && l.key == table+"."+key:
			return []byte(src[:l.valStart] + value + src[l.valEnd:])
		case l.table == table:
			tableEnd = l.end
		}
	}
	line := key + " = " + value + "\n"
	if tableEnd >= 0 {
		return []byte(src[:tableEnd] + line + src[tableEnd:])
	}
	if src != "" && !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	if src != "" && !strings.HasSuffix(src, "\n\n") {
		src += "\n"
	}
	return []byte(src + "[" + table + "]\n" + line)
}

// docLine is one logical line of a TOML document: a table header, a
// key/value pair (whose value may span several physical lines), or
// anything else (blank, comment).
type docLine struct {
	header string // table name, for a [table] line
	table  string // the table a key belongs to
	key    string // dotted key as written, quotes removed
	// valStart and valEnd delimit the value's text; end is the offset
	// after the line's newline.
	valStart, valEnd, end int
}

// scanDoc splits src into logical lines. It understands enough TOML to find
// where each value ends (strings of all four kinds, nested arrays and inline
// tables, comments), so a multi-line array is one line and a '[' inside a
// string is not a header.
func scanDoc(src string) []docLine {
	var out []docLine
	table := ""
	for i := 0; i < len(src); {
		j := skipSpace(src, i)
		var l docLine
		switch {
		case j >= len(src) || src[j] == '\n' || src[j] == '#' || src[j] == '\r':
		case src[j] == '[':
			k := strings.IndexByte(src[j:], '\n')
			if k < 0 {
				k = len(src) - j
			}
			h := src[j:min(j+k, len(src))]
			if c := strings.IndexByte(h, '#'); c >= 0 {
				h = h[:c]
			}
			h = strings.TrimSpace(h)
			if !strings.HasPrefix(h, "[[") {
				name := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
				table = normalizeKey(name)
				l.header = table
			} else {
				table = "\x00array" // arrays of tables: never edited
			}
		default:
			eq := keyEnd(src, j)
			if eq >= len(src) || src[eq] != '=' {
				break // not a key line we understand; skip it
			}
			l.table, l.key = table, normalizeKey(src[j:eq])
			l.valStart = skipSpace(src, eq+1)
			l.valEnd = valueEnd(src, l.valStart)
			i = l.valEnd
		}
		k := strings.IndexByte(src[i:], '\n')
		if k < 0 {
			i = len(src)
		} else {
			i += k + 1
		}
		l.end = i
		out = append(out, l)
	}
	return out
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// keyEnd returns the offset of the '=' after a key starting at i (quoted
// parts skipped), or the offset of the end of line when there is none.
func keyEnd(s string, i int) int {
	for i < len(s) && s[i] != '\n' {
		switch s[i] {
		case '=':
			return i
		case '"', '\'':
			i = stringEnd(s, i)
			continue
		}
		i++
	}
	return len(s)
}

// normalizeKey removes quotes and spaces around the parts of a dotted key.
func normalizeKey(k string) string {
	parts := strings.Split(strings.TrimSpace(k), ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// valueEnd returns the offset just after the TOML value starting at i.
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"', '\'':
		return stringEnd(s, i)
	case '[', '{':
		return bracketEnd(s, i)
	}
	for i < len(s) && !strings.ContainsRune(" \t\r\n#,]}", rune(s[i])) {
		i++
	}
	return i
}

// stringEnd returns the offset after the string (basic, literal, or their
// multi-line forms) that starts at i.
func stringEnd(s string, i int) int {
	q := s[i]
	if strings.HasPrefix(s[i:], strings.Repeat(string(q), 3)) {
		delim := strings.Repeat(string(q), 3)
		j := i + 3
		for j < len(s) {
			if q == '"' && s[j] == '\\' {
				j += 2
				continue
			}
			if strings.HasPrefix(s[j:], delim) {
				j += 3
				for j < len(s) && s[j] == q { // up to two quotes may end the content
					j++
				}
				return j
			}
			j++
		}
		return len(s)
	}
	j := i + 1
	for j < len(s) && s[j] != '\n' {
		if q == '"' && s[j] == '\\' {
			j += 2
			continue
		}
		if s[j] == q {
			return j + 1
		}
		j++
	}
	return j
}

// bracketEnd returns the offset after the array or inline table starting at
// i, skipping strings and comments inside it.
func bracketEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); {
		switch s[j] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '"', '\'':
			j = stringEnd(s, j)
			continue
		case '#':
			k := strings.IndexByte(s[j:], '\n')
			if k < 0 {
				return len(s)
			}
			j += k
			continue
		}
		j++
	}
	return len(s)
}
