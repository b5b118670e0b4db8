package config

import (
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/tomlscan"
)

// setKey returns data with key in [table] set to value (a TOML value as
// text). An existing value is replaced where it stands, whatever follows it
// on the line (a comment) kept; a missing key is added after the last
// key of its table; a missing table is added at the end. data must parse.
func setKey(data []byte, table, key, value string) ([]byte, error) {
	stmts, err := tomlscan.Scan(data)
	if err != nil {
		return nil, err
	}
	src := string(data)
	tableEnd := -1 // offset after the last line of table's header or keys
	for _, s := range stmts {
		switch {
		case s.Kind == tomlscan.Table:
			if s.Key == table && tableEnd < 0 {
				tableEnd = s.End
			}
		case s.Kind != tomlscan.KeyValue || s.InArrayTable:
		case s.Table == table && s.Key == key, s.Table == "" && s.Key == table+"."+key:
			return []byte(src[:s.ValStart] + value + src[s.ValEnd:]), nil
		case s.Table == table:
			tableEnd = s.End
		}
	}
	line := key + " = " + value + "\n"
	if tableEnd >= 0 {
		return []byte(src[:tableEnd] + line + src[tableEnd:]), nil
	}
	if src != "" && !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	if src != "" && !strings.HasSuffix(src, "\n\n") {
		src += "\n"
	}
	return []byte(src + "[" + table + "]\n" + line), nil
}
