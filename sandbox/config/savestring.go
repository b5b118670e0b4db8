package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// SaveString sets key under [table] (a dotted table such as
// "languages.r" too) to the string s in the file at path, by Save's
// in-place edit: every other byte stays, an existing table gets the key
// (never a second table of the same name). The result must pass Parse
// and hold the same values as before but that key; otherwise nothing is
// written (ErrNotSaved). It backs up and writes as Save does and returns
// the backup's path, if one was made.
func SaveString(path, table, key, s string) (backup string, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("save config: %w", err)
	}
	if old != nil {
		if _, err := Parse(path, old); err != nil {
			return "", fmt.Errorf("save config: %w: the file on disk is invalid; fix it by hand first: %w", ErrNotSaved, err)
		}
	}
	data := old
	if data == nil {
		data = []byte(header)
	}
	if data, err = setKey(data, table, key, QuoteString(s)); err != nil {
		return "", fmt.Errorf("save config: %w: %w", ErrNotSaved, err)
	}
	if _, err := Parse(path, data); err != nil {
		return "", fmt.Errorf("save config: %w: %w", ErrNotSaved, err)
	}
	if err := onlyKeyChanged(old, data, table, key, s); err != nil {
		return "", fmt.Errorf("save config: %w: editing %s in place: %w; edit it by hand", ErrNotSaved, path, err)
	}
	if old != nil && string(data) == string(old) {
		return "", nil
	}
	return writeEdited(path, old, data)
}

// onlyKeyChanged checks that the document edited holds what old held
// with table.key set to s, and nothing else changed.
func onlyKeyChanged(old, edited []byte, table, key, s string) error {
	var before, after map[string]any
	if err := toml.Unmarshal(old, &before); err != nil {
		return err
	}
	if err := toml.Unmarshal(edited, &after); err != nil {
		return err
	}
	if before == nil {
		before = map[string]any{}
	}
	m := before
	for _, part := range strings.Split(table, ".") {
		sub, ok := m[part].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[part] = sub
		}
		m = sub
	}
	m[key] = s
	if !reflect.DeepEqual(before, after) {
		return fmt.Errorf("the edit of %s.%s changed other settings", table, key)
	}
	return nil
}
