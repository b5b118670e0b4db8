package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// tomlFormat edits Codex's config.toml, where our entry is the table
// [mcp_servers.mcp-sandbox]. go-toml reads and checks the file but would
// drop comments if it wrote it, so the table is cut out and put back as
// text, and the result is checked by decoding both versions: everything but
// our entry must come out equal.
type tomlFormat struct{}

const tomlServersKey = "mcp_servers"

func (tomlFormat) fixedFields() []field { return nil }

func parseTOML(src []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(src, &doc); err != nil {
		pe := &ParseError{Err: err}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			pe.Line, pe.Column = de.Position()
		}
		return nil, pe
	}
	return doc, nil
}

// tomlEntry returns our table from a decoded file, or nil.
func tomlEntry(doc map[string]any) (map[string]any, error) {
	servers, has := doc[tomlServersKey]
	if !has {
		return nil, nil
	}
	sm, ok := servers.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %q is %s, not a table", ErrStructure, tomlServersKey, describe(servers))
	}
	entry, has := sm[ServerName]
	if !has {
		return nil, nil
	}
	em, ok := entry.(map[string]any)
	if !ok {
		return map[string]any{}, nil
	}
	return em, nil
}

// withoutEntry removes our table from a decoded file, and the servers
// table with it when nothing else is left there.
func withoutEntry(doc map[string]any) map[string]any {
	if sm, ok := doc[tomlServersKey].(map[string]any); ok {
		delete(sm, ServerName)
		if len(sm) == 0 {
			delete(doc, tomlServersKey)
		}
	}
	return doc
}

func (tomlFormat) read(src []byte) (map[string]any, error) {
	doc, err := parseTOML(src)
	if err != nil {
		return nil, err
	}
	return tomlEntry(doc)
}

// ours returns the blocks of our table and its sub-tables.
func ours(blocks []tomlBlock) []tomlBlock {
	var out []tomlBlock
	for _, b := range blocks {
		if len(b.key) >= 2 && b.key[0] == tomlServersKey && b.key[1] == ServerName {
			out = append(out, b)
		}
	}
	return out
}

func (f tomlFormat) install(src []byte, want Entry) ([]byte, error) {
	doc, err := parseTOML(src)
	if err != nil {
		return nil, err
	}
	raw, err := tomlEntry(doc)
	if err != nil {
		return nil, err
	}
	if raw != nil && len(differences(raw, nil, want)) == 0 {
		return src, nil
	}
	merged := mergeTOML(raw, want)
	table, err := renderTOMLTable(merged, newline(src))
	if err != nil {
		return nil, err
	}
	all, err := scanTOML(src)
	if err != nil {
		return nil, err
	}
	blocks := ours(all)
	var out []byte
	switch {
	case len(blocks) > 0:
		out = replaceBlocks(src, blocks, table)
	case raw != nil:
		return nil, fmt.Errorf("%w: the %s entry is written with dotted keys or an inline table; edit it by hand", ErrStructure, ServerName)
	default:
		out = appendTable(src, table)
	}
	if err := checkTOML(doc, out, merged); err != nil {
		return nil, err
	}
	return out, nil
}

func (f tomlFormat) uninstall(src []byte) ([]byte, error) {
	doc, err := parseTOML(src)
	if err != nil {
		return nil, err
	}
	raw, err := tomlEntry(doc)
	if err != nil || raw == nil {
		return src, err
	}
	all, err := scanTOML(src)
	if err != nil {
		return nil, err
	}
	blocks := ours(all)
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: the %s entry is written with dotted keys or an inline table; remove it by hand", ErrStructure, ServerName)
	}
	out := replaceBlocks(src, blocks, nil)
	if err := checkTOML(doc, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// checkTOML decodes the edited file out and makes sure that our entry is
// want (or gone, when want is nil) and that nothing else changed from old.
func checkTOML(old map[string]any, out []byte, want map[string]any) error {
	doc, err := parseTOML(out)
	if err != nil {
		return fmt.Errorf("edited file does not parse (this is a bug): %w", err)
	}
	got, err := tomlEntry(doc)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) && (want != nil || got != nil) {
		return fmt.Errorf("%w: after editing, the %s entry reads back as %v, not %v", ErrStructure, ServerName, got, want)
	}
	if !reflect.DeepEqual(withoutEntry(doc), withoutEntry(old)) {
		return fmt.Errorf("%w: editing the %s table would change other settings; edit it by hand", ErrStructure, ServerName)
	}
	return nil
}

// mergeTOML is our table as Install writes it: the owned keys set, and any
// other key a person added kept.
func mergeTOML(raw map[string]any, want Entry) map[string]any {
	m := make(map[string]any, len(raw)+3)
	for k, v := range raw {
		m[k] = v
	}
	m["command"] = want.Command
	args := make([]any, 0, len(want.Args))
	for _, a := range want.Args {
		args = append(args, a)
	}
	m["args"] = args
	env := map[string]any{}
	if old, ok := raw["env"].(map[string]any); ok {
		for k, v := range old {
			env[k] = v
		}
	}
	for _, k := range want.envKeys() {
		if w, ok := want.Env[k]; ok {
			env[k] = w
		} else {
			delete(env, k)
		}
	}
	delete(m, "env")
	if len(env) > 0 {
		m["env"] = env
	}
	for _, k := range conflicting {
		delete(m, k)
	}
	return m
}

// renderTOMLTable writes our table: command, args and env first, then the
// other keys in order, each on one line.
func renderTOMLTable(m map[string]any, nl string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("[" + tomlServersKey + "." + tomlKey(ServerName) + "]\n")
	b.WriteString("command = " + config.QuoteString(m["command"].(string)) + "\n")
	args := m["args"].([]any)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = config.QuoteString(a.(string))
	}
	b.WriteString("args = [" + strings.Join(quoted, ", ") + "]\n")
	rest := make([]string, 0, len(m))
	for k := range m {
		if k != "command" && k != "args" {
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(rest, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "env":
			return -1
		case b == "env":
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range rest {
		line, err := tomlLine(k, m[k])
		if err != nil {
			return nil, err
		}
		b.WriteString(line)
	}
	return []byte(strings.ReplaceAll(b.String(), "\n", nl)), nil
}

// tomlLine writes key = value on one line, tables inline.
func tomlLine(k string, v any) (string, error) {
	if env, ok := v.(map[string]any); ok && k == "env" && allStrings(env) {
		keys := make([]string, 0, len(env))
		for ek := range env {
			keys = append(keys, ek)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, ek := range keys {
			parts[i] = tomlKey(ek) + " = " + config.QuoteString(env[ek].(string))
		}
		return "env = { " + strings.Join(parts, ", ") + " }\n", nil
	}
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetTablesInline(true)
	if err := enc.Encode(map[string]any{k: v}); err != nil {
		return "", fmt.Errorf("write %s.%s.%s: %w", tomlServersKey, ServerName, k, err)
	}
	return buf.String(), nil
}

func allStrings(m map[string]any) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

// replaceBlocks puts table where the first block was and removes the
// others; with a nil table it removes them all. A blank line left doubled
// by a removal goes too.
func replaceBlocks(src []byte, blocks []tomlBlock, table []byte) []byte {
	var out []byte
	at := 0
	for i, b := range blocks {
		start := b.start
		if i > 0 || table == nil {
			start = trimBlankBefore(src, at, b.start, b.end)
		}
		out = append(out, src[at:start]...)
		if i == 0 {
			out = append(out, table...)
		}
		at = b.end
	}
	return append(out, src[at:]...)
}

// trimBlankBefore moves start back over one blank line when the removed
// block [start, end) is followed by a blank line or the end of the file,
// so the removal does not leave two blank lines (or one at the end).
func trimBlankBefore(src []byte, floor, start, end int) int {
	if start == floor || start < 2 {
		return start
	}
	prev := bytes.LastIndexByte(src[:start-1], '\n') + 1
	if prev < floor || len(bytes.TrimSpace(src[prev:start])) != 0 {
		return start
	}
	if end < len(src) && len(bytes.TrimSpace(src[end:nextLine(src, end)])) != 0 {
		return start
	}
	return prev
}

// appendTable adds table at the end, after a blank line.
func appendTable(src, table []byte) []byte {
	nl := []byte(newline(src))
	out := bytes.Clone(src)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	if len(bytes.TrimSpace(out)) > 0 && !bytes.HasSuffix(out, append(bytes.Clone(nl), nl...)) {
		out = append(out, nl...)
	}
	return append(out, table...)
}
