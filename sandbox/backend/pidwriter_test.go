package backend

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func TestPIDWriter(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		pid    int
		out    string
		ready  bool
	}{
		{"one write", []string{"123\nhello\n"}, 123, "hello\n", true},
		{"split PID", []string{"1", "23", "\nhel", "lo"}, 123, "hello", true},
		{"PID only", []string{"7\n"}, 7, "", true},
		{"not yet a line", []string{"12"}, 0, "", false},
		{"no PID line", []string{strings.Repeat("x", 40)}, 0, strings.Repeat("x", 40), true},
		{"long first line then newline", []string{strings.Repeat("y", 33), "\nrest"}, 0, strings.Repeat("y", 33) + "\nrest", true},
		{"garbage line", []string{"abc\nout"}, 0, "out", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewPIDWriter(&out)
			for _, s := range c.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if got := w.PID(); got != c.pid {
				t.Errorf("PID = %d, want %d", got, c.pid)
			}
			if out.String() != c.out {
				t.Errorf("passed on %q, want %q", out.String(), c.out)
			}
			select {
			case <-w.Ready():
				if !c.ready {
					t.Error("ready before the first line ended")
				}
			default:
				if c.ready {
					t.Error("not ready")
				}
			}
		})
	}
	if OrDiscard(nil) == nil {
		t.Error("OrDiscard(nil) is nil")
	}
}

// WaitPID returns the PID once the line is read, and 0 without waiting
// further when the output ends first or ctx ends.
func TestWaitPID(t *testing.T) {
	w := NewPIDWriter(io.Discard)
	done := make(chan struct{})
	go w.Write([]byte("42\n"))
	if got := w.WaitPID(context.Background(), done); got != 42 {
		t.Errorf("after the line: %d, want 42", got)
	}

	w = NewPIDWriter(io.Discard)
	close(done)
	if got := w.WaitPID(context.Background(), done); got != 0 {
		t.Errorf("output ended: %d, want 0", got)
	}

	w = NewPIDWriter(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := w.WaitPID(ctx, make(chan struct{})); got != 0 {
		t.Errorf("ctx ended: %d, want 0", got)
	}
}
