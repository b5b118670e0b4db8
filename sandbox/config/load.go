package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// Error is an invalid configuration file: where, and what is wrong.
type Error struct {
	Path string
	Line int // 1-based; 0 when unknown
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrInvalid is wrapped by every *Error, so callers can test errors.Is.
var ErrInvalid = errors.New("invalid configuration")

// Unwrap lets errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

// Load reads the file at path. A missing file gives the defaults (with
// Source set to path); a file that does not parse or holds a bad value gives
// an *Error naming the line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		c := Default()
		c.Source = path
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes data (read from path, used in messages) over the defaults
// and validates it.
func Parse(path string, data []byte) (*Config, error) {
	c := Default()
	c.Source = path
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, decodeError(path, data, err)
	}
	// A deny list written in the file adds to the defaults; replacing
	// them takes an explicit switch.
	if !c.Files.ReadDenyReplace {
		c.Files.ReadDeny = mergeDeny(DefaultReadDeny(), c.Files.ReadDeny)
	}
	if !c.Files.WriteDenyReplace {
		c.Files.WriteDeny = mergeDeny(DefaultWriteDeny(), c.Files.WriteDeny)
	}
	if err := c.validate(); err != nil {
		var ve *Error
		if errors.As(err, &ve) {
			ve.Path = path
			ve.Line = lineOfKey(data, ve.Key)
		}
		return nil, err
	}
	return c, nil
}

func decodeError(path string, data []byte, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := fixCharacter(strings.TrimPrefix(de.Error(), "toml: "), data, line, col)
		return &Error{Path: path, Line: line, Key: strings.Join(de.Key(), "."), Msg: msg}
	}
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		first := sm.Errors[0]
		line, _ := first.Position()
		msg := "unknown setting (check its spelling and section)"
		return &Error{Path: path, Line: line, Key: strings.Join(first.Key(), "."), Msg: msg}
	}
	return &Error{Path: path, Msg: err.Error()}
}

var tableHeader = regexp.MustCompile(`^\s*\[+\s*([^\]]+?)\s*\]+`)

// lineOfKey finds the 1-based line where a dotted key such as
// "limits.memory_mb" is set, by following table headers; 0 if not found.
func lineOfKey(data []byte, key string) int {
	if key == "" {
		return 0
	}
	table, leaf := "", key
	if i := strings.LastIndex(key, "."); i >= 0 {
		table, leaf = key[:i], key[i+1:]
	}
	cur := ""
	tableLine := 0
	for i, line := range strings.Split(string(data), "\n") {
		if m := tableHeader.FindStringSubmatch(line); m != nil {
			cur = strings.ReplaceAll(strings.ReplaceAll(m[1], `"`, ""), " ", "")
			if cur == table {
				tableLine = i + 1
			}
			continue
		}
		if cur != table {
			continue
		}
		t := strings.TrimSpace(line)
		if k, _, ok := strings.Cut(t, "="); ok && strings.Trim(strings.TrimSpace(k), `"`) == leaf {
			return i + 1
		}
	}
	return tableLine
}

// badCharacter is how the TOML parser names the character it did not
// expect: by its first byte, so "…" (U+2026) reads as U+00E2 'â'.
var badCharacter = regexp.MustCompile(`character U\+00[89A-F][0-9A-F] '.'`)

// fixCharacter names the whole character at line:col (1-based, in bytes)
// where msg names only its first byte.
func fixCharacter(msg string, data []byte, line, col int) string {
	if !badCharacter.MatchString(msg) || line < 1 || col < 1 {
		return msg
	}
	lines := bytes.Split(data, []byte("\n"))
	if line > len(lines) || col > len(lines[line-1]) {
		return msg
	}
	r, _ := utf8.DecodeRune(lines[line-1][col-1:])
	if r == utf8.RuneError {
		return badCharacter.ReplaceAllString(msg, "byte that is not UTF-8")
	}
	return badCharacter.ReplaceAllString(msg, fmt.Sprintf("character %q (%U)", r, r))
}
