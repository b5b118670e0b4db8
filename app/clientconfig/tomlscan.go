package clientconfig

import (
	"bytes"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/tomlscan"
)

// Our table is cut out of a TOML file and put back textually: go-toml
// decodes and encodes but drops comments, and the rest of a person's file
// must stay as they wrote it. sandbox/tomlscan says where each table starts
// and ends.

// tomlBlock is a table header and the key/value lines under it.
type tomlBlock struct {
	key   []string // the header's dotted key
	start int      // offset of the header line
	end   int      // offset just past its last key/value line (or the header)
}

// scanTOML returns the tables of src in order; statements before the first
// header are not a block.
func scanTOML(src []byte) ([]tomlBlock, error) {
	stmts, err := tomlscan.Scan(src)
	if err != nil {
		return nil, err
	}
	var blocks []tomlBlock
	for _, s := range stmts {
		switch {
		case s.Kind != tomlscan.KeyValue:
			blocks = append(blocks, tomlBlock{key: s.Path, start: s.Start, end: s.End})
		case len(blocks) > 0:
			blocks[len(blocks)-1].end = s.End
		}
	}
	return blocks, nil
}

// nextLine returns the offset after the line break at or after i.
func nextLine(src []byte, i int) int {
	if k := bytes.IndexByte(src[i:], '\n'); k >= 0 {
		return i + k + 1
	}
	return len(src)
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// tomlKey writes k as a TOML key: bare when it can be, quoted otherwise.
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
