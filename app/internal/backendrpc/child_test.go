package backendrpc

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// syncBuffer is a log's buffer written from the child's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startChild starts this test binary as the child (TestMain serves the
// fake backend in it).
func startChild(t *testing.T) (*Client, *syncBuffer) {
	t.Helper()
	t.Setenv("BACKENDRPC_TEST_CHILD", "1")
	logs := &syncBuffer{}
	c, err := Start(os.Args[0], slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Open(context.Background(), config.Kubernetes{Namespace: "ns"}); err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// waitEnded waits for the child's answers to end.
func waitEnded(t *testing.T, c *Client) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the child did not end")
	}
}

// A child answers the calls, its stderr is in the parent's log, and it
// ends when its stdin does (Close; the parent's exit closes it too).
func TestChildEndsWithItsStdin(t *testing.T) {
	c, logs := startChild(t)
	if list, err := c.List(context.Background()); err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	c.w.Close() // what the parent's exit does to the pipe
	waitEnded(t, c)
	if c.Alive() {
		t.Error("Alive after the child ended")
	}
	if err := c.proc.Signal(os.Interrupt); err == nil { // Wait reaped it: no process
		t.Error("the child still runs after its stdin ended")
	}
	if !strings.Contains(logs.String(), "child says hello") {
		t.Errorf("the child's stderr is not in the log:\n%s", logs)
	}
}

// A child that dies fails the calls with an error saying what happens
// next, and Alive says so (the loop starts another at its next look).
func TestChildKilled(t *testing.T) {
	c, _ := startChild(t)
	if err := c.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, c)
	_, err := c.List(context.Background())
	if err == nil || !strings.Contains(err.Error(), "backend-serve ended") || !strings.Contains(err.Error(), "starts it anew") {
		t.Errorf("List after the child died: %v", err)
	}
	if c.Alive() {
		t.Error("Alive after the child died")
	}
}
