package config

// Saving keeps what the user wrote. go-toml/v2 decodes and encodes values
// but cannot round-trip a document: it drops comments, blank lines and the
// order of keys. So Save does not re-encode the file; it edits it in place,
// one setting at a time: a changed value is replaced on its own line (a
// trailing comment stays), a missing key is added at the end of its table,
// a missing table at the end of the file. Everything else, comments
// included, is left byte for byte. The result is parsed and compared with
// what was asked for before anything is written.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
)

// ErrNotSaved is wrapped by every error of Save that left the file as it was
// because the edit could not be made safely.
var ErrNotSaved = errors.New("config not saved")

// header starts a config file that Save creates.
const header = `# MCP Sandbox configuration, shared by the tray and every server process.
# Servers reload it when it changes. Comments you add here are kept when the
# tray saves its settings. Every key, with its default: docs/configuration.md
# of https://github.com/mcp-sandbox/mcp-sandbox.
`

// Save writes c to path, keeping the comments, order and layout of the file
// already there (see the comment at the top of this file), after validating
// the result with Parse. It backs the previous file up beside it as
// <file>.<YYYYMMDD-HHMMSS>.bak (keeping the oldest backup and the newest
// few, by sandbox/filebackup's rule, as for AI clients' configs) and
// writes atomically; it writes nothing when
// the file already says what c says. It returns the backup's path, if one
// was made.
//
// [languages] and network.install_env are edited by hand: when c differs
// from the file there, Save refuses (ErrNotSaved) rather than drop them.
func Save(path string, c *Config) (backup string, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("save config: %w", err)
	}
	cur := Default()
	if old != nil {
		if cur, err = Parse(path, old); err != nil {
			return "", fmt.Errorf("save config: %w: the file on disk is invalid; fix it by hand first: %w", ErrNotSaved, err)
		}
	}
	if !reflect.DeepEqual(emptyIfNil(cur.Languages), emptyIfNil(c.Languages)) ||
		!reflect.DeepEqual(emptyIfNil(cur.Network.InstallEnv), emptyIfNil(c.Network.InstallEnv)) {
		return "", fmt.Errorf("save config: %w: [languages] and network.install_env are edited by hand in %s", ErrNotSaved, path)
	}

	data := old
	if data == nil {
		data = []byte(header)
	}
	want, have := settingsOf(c), settingsOf(cur)
	for i, s := range want {
		if old != nil && s.value == have[i].value {
			continue
		}
		if old == nil && s.value == have[i].value && !s.always {
			continue
		}
		if data, err = setKey(data, s.table, s.key, s.value); err != nil {
			return "", fmt.Errorf("save config: %w: %w", ErrNotSaved, err)
		}
	}
	got, err := Parse(path, data)
	if err != nil {
		return "", fmt.Errorf("save config: %w: %w", ErrNotSaved, err)
	}
	if !reflect.DeepEqual(settingsOf(got), want) {
		return "", fmt.Errorf("save config: %w: editing %s in place did not give the settings asked for; edit it by hand", ErrNotSaved, path)
	}
	if old != nil && string(data) == string(old) {
		return "", nil
	}
	return writeEdited(path, old, data)
}

// writeEdited writes data, the edited text of the file at path (old, or
// nil when there was none), backing old up beside it and writing
// atomically, and returns the backup's path.
func writeEdited(path string, old, data []byte) (backup string, err error) {
	perm := fs.FileMode(0o600)
	if old != nil {
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
		if backup, err = filebackup.Create(path, old, perm, backupNow()); err != nil {
			return "", fmt.Errorf("save config: back up: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("save config: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, perm); err != nil {
		return backup, fmt.Errorf("save config: %w", err)
	}
	if backup != "" {
		filebackup.Prune(path)
	}
	return backup, nil
}

func emptyIfNil[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return m
}

// backupNow is the clock backups are named by; tests set it.
var backupNow = time.Now

// setting is one key of a table, with its value written as TOML.
type setting struct {
	table, key, value string
	// always is set for keys a new file spells out even at their default.
	always bool
}

// settingsOf lists every scalar and list setting of c, table by table in
// the order of the Config struct, and kubernetes.warm_pool as an inline
// table. Other maps ([languages], install_env) are left out: Save does not
// write them.
func settingsOf(c *Config) []setting {
	var out []setting
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		table := tomlName(t.Field(i))
		if table == "" || t.Field(i).Type.Kind() != reflect.Struct {
			continue
		}
		sv, st := v.Field(i), t.Field(i).Type
		for j := 0; j < st.NumField(); j++ {
			key := tomlName(st.Field(j))
			if key == "" || st.Field(j).Type.Kind() == reflect.Map {
				continue
			}
			out = append(out, setting{table: table, key: key, value: tomlValue(sv.Field(j).Interface()),
				always: table != "update" && table != "tray" && table != "kubernetes" && table != "http"})
		}
	}
	out = append(out, setting{table: "kubernetes", key: "warm_pool", value: inlineSizes(c.Kubernetes.WarmPool)})
	// A deny list is written as the file holds it: what it adds to the
	// defaults (Parse merges them again).
	for i, st := range out {
		switch {
		case st.table == "files" && st.key == "read_deny":
			out[i].value = tomlValue(DenyAdded(c.Files.ReadDeny, DefaultReadDeny(), c.Files.ReadDenyReplace))
		case st.table == "files" && st.key == "write_deny":
			out[i].value = tomlValue(DenyAdded(c.Files.WriteDeny, DefaultWriteDeny(), c.Files.WriteDenyReplace))
		}
	}
	return out
}

// bareKey is a TOML key written without quotes.
var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// inlineSizes writes a language → size table as a TOML inline table, keys
// sorted: { python = 2 }.
func inlineSizes(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		key := k
		if !bareKey.MatchString(k) {
			key = QuoteString(k)
		}
		parts[i] = key + " = " + strconv.Itoa(m[k])
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// tomlValue writes v as a TOML value; strings as basic (double-quoted)
// strings, the way the file's documentation writes them.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return QuoteString(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case float64:
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = QuoteString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	panic(fmt.Sprintf("config: no TOML form for %T", v))
}

// QuoteString writes s as a TOML basic (double-quoted) string, escaping
// what a basic string cannot hold. Everything that edits TOML text by hand
// (Save, the Codex client config) quotes with it.
func QuoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
