package clitest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		code     int
		out, err string
	}{
		{"success", "echo out; echo err >&2", 0, "out\n", "err\n"},
		{"exit code", "echo partial; exit 3", 3, "partial\n", ""},
		{"env is exactly what is given", `printf %s "$HOME$X"`, 0, "/nowhere1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := Run(t, "/bin/sh", []string{"HOME=/nowhere", "X=1"}, "-c", tt.script)
			if code != tt.code || out != tt.out || errOut != tt.err {
				t.Errorf("Run = %d %q %q, want %d %q %q", code, out, errOut, tt.code, tt.out, tt.err)
			}
		})
	}
}

func TestLineWith(t *testing.T) {
	tests := []struct {
		text, s, want string
	}{
		{"a\nb ready\nc\n", "ready", "b ready"},
		{"a\nb rea", "rea", ""}, // a line still being written is not whole
		{"", "x", ""},
		{"x1\nx2\n", "x", "x1"},
	}
	for _, tt := range tests {
		if got := lineWith(tt.text, tt.s); got != tt.want {
			t.Errorf("lineWith(%q, %q) = %q, want %q", tt.text, tt.s, got, tt.want)
		}
	}
}

func TestBufferWaitLine(t *testing.T) {
	var b Buffer
	go func() {
		for i := range 5 {
			fmt.Fprintf(&b, "line %d\n", i)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if got := b.WaitLine(t, "line 4", 10*time.Second); got != "line 4" {
		t.Errorf("WaitLine = %q", got)
	}
}

// fatalTB records Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

func TestWaitForTimesOut(t *testing.T) {
	f := &fatalTB{TB: t}
	WaitFor(f, "the impossible", 120*time.Millisecond, func() bool { return false }, func() string { return "what it wrote" })
	if !strings.Contains(f.msg, "waiting for the impossible") || !strings.Contains(f.msg, "what it wrote") {
		t.Errorf("WaitFor's failure says %q", f.msg)
	}
}

func TestBinaryOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	a := Binary(t, "mcp-sandbox")
	b := Binary(t, "mcp-sandbox")
	if a != b {
		t.Errorf("built twice: %s, %s", a, b)
	}
	if _, err := os.Stat(a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(Cleanup)
}
