package agentconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// TestSlot: a failed start is counted and keeps nothing; a bad slot says
// why; an empty slot is undecided.
func TestSlot(t *testing.T) {
	var s Slot
	if running, bad := s.State(); running || bad != "" {
		t.Fatalf("empty slot: running=%v bad=%q", running, bad)
	}
	c, _, starts, done := s.Starting()
	if c != nil || starts != 0 {
		t.Fatalf("empty slot: conn=%v starts=%d", c, starts)
	}
	if s.Started(nil, func() bool { return true }) {
		t.Error("a failed start was kept")
	}
	done()
	if _, _, starts, done := s.Starting(); starts != 1 {
		t.Errorf("starts = %d, want 1", starts)
	} else {
		done()
	}
	s.KillAll() // nothing runs: must not block
	if _, bad := BadSlot("why").State(); bad != "why" {
		t.Errorf("bad slot: %q", bad)
	}
}

// TestLaunchNoAttach: a backend that cannot attach cannot run the agent.
func TestLaunchNoAttach(t *testing.T) {
	_, err := Launch(context.Background(), struct{ backend.Backend }{}, LaunchRequest{})
	if !errors.Is(err, ErrUnusable) {
		t.Fatalf("got %v, want ErrUnusable", err)
	}
}

// TestExecBigStdin: a stdin over agent.MaxStdin goes, whole, to the
// engine's exec, never to the agent.
func TestExecBigStdin(t *testing.T) {
	in := bytes.Repeat([]byte("x"), agent.MaxStdin+10)
	var got []byte
	_, err := (&Conn{}).Exec(context.Background(), ExecRequest{
		Spec: backend.ExecSpec{Stdin: bytes.NewReader(in)},
		Fallback: func(_ context.Context, spec backend.ExecSpec) (backend.ExecStatus, error) {
			got, _ = io.ReadAll(spec.Stdin)
			return backend.ExecStatus{}, nil
		},
	})
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("fallback got %d bytes, want %d (err %v)", len(got), len(in), err)
	}
}

// TestSlotEnded: a slot says why its last connection ended, and nothing
// while it runs.
func TestSlotEnded(t *testing.T) {
	var s Slot
	if err := s.Ended(); err != nil {
		t.Fatalf("empty slot: %v", err)
	}
	c := &Conn{dead: make(chan struct{}), calls: map[int]*agentCall{}}
	_, _, _, done := s.Starting()
	s.Started(c, func() bool { return true })
	done()
	if err := s.Ended(); err != nil {
		t.Fatalf("running: %v", err)
	}
	c.fail(errors.New("the agent stopped reading its input"))
	if err := s.Ended(); err == nil || err.Error() != "the agent stopped reading its input" {
		t.Fatalf("ended: %v", err)
	}
}
