package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse: whatever the file holds, Parse returns a valid config or an
// *Error naming where, and never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(commented))
	f.Add([]byte("[limits]\nmemory_mb = -1\n"))
	f.Add([]byte("[images]\npython = \"a\nb\"\n"))
	f.Add([]byte("[languages.ruby]\nimage = \"ruby:3\"\nrun = [\"ruby\", \"{file}\"]\nextension = \".rb\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("config.toml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is not a *config.Error: %T %v", err, err)
			}
			return
		}
		if c.Limits.MemoryMB <= 0 || c.Limits.MaxSandboxes <= 0 {
			t.Fatalf("accepted limits that are not positive: %+v", c.Limits)
		}
	})
}

// FuzzSave: editing any valid file in place either gives a file that
// parses to exactly the settings asked for, or refuses and leaves the file
// as it was. Comments and unknown text are the fuzzer's to choose.
func FuzzSave(f *testing.F) {
	f.Add([]byte(commented), "python:3.13-slim", int64(1024), "ghcr.io/x/*")
	f.Add([]byte("[images]\npython = 'lit\"eral' # x\n[limits]\nmemory_mb = 0x200\n"), "a\"b\\c", int64(64), "")
	f.Add([]byte("images.python = \"x\"\n[limits]\n\"memory_mb\" = 7 #\n"), "python:3", int64(300), "python:*")
	f.Add([]byte("[images]\nallowed = [\n  \"a\", # ]\n  'b',\n]\n"), "python:3", int64(300), "c\nd")
	f.Fuzz(func(t *testing.T, data []byte, image string, memory int64, allowed string) {
		start, err := Parse("config.toml", data)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := *start
		c.Images.Python = image
		c.Limits.MemoryMB = int(memory)
		c.Images.Allowed = append([]string{allowed}, start.Images.Allowed...)
		_, err = Save(path, &c)
		after, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if !bytes.Equal(after, data) {
				t.Fatalf("Save failed (%v) but changed the file:\n%s", err, after)
			}
			return
		}
		got, err := Parse(path, after)
		if err != nil {
			t.Fatalf("Save wrote a file that does not parse: %v\n%s", err, after)
		}
		if !reflect.DeepEqual(settingsOf(got), settingsOf(&c)) {
			t.Fatalf("saved settings differ:\n got %+v\nwant %+v\n%s", settingsOf(got), settingsOf(&c), after)
		}
	})
}
