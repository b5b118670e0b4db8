package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// sessionProc is an interpreter that keeps one variable: code "x = N"
// sets it, "x" returns it, "break" answers with a done frame that is not
// JSON (a break of the protocol).
type sessionProc struct {
	out   io.Writer
	nonce string
	x     string
	done  chan struct{}
	once  sync.Once
}

func (p *sessionProc) Write(b []byte) (int, error) {
	head, payload, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(head)
	if p.nonce == "" { // the boot line: "NONCE LENGTH"
		p.nonce = f[0]
		r, _ := json.Marshal(runner.Ready{PID: 7})
		_, _ = p.out.Write(runner.AppendFrame(nil, p.nonce, runner.KindReady, r))
		return len(b), nil
	}
	var req runner.RunRequest
	if err := json.Unmarshal([]byte(payload), &req); err != nil {
		panic(err)
	}
	d := runner.Done{ID: req.ID}
	switch {
	case req.Code == "break":
		_, _ = p.out.Write(runner.AppendFrame(nil, p.nonce, runner.KindDone, []byte("not json")))
		return len(b), nil
	case req.Code == "break, then done": // the run's code wrote the bad frame
		_, _ = p.out.Write(runner.AppendFrame(nil, p.nonce, runner.KindDone, []byte("not json")))
	case strings.HasPrefix(req.Code, "x = "):
		p.x = strings.TrimPrefix(req.Code, "x = ")
	case req.Code == "x" && p.x != "":
		d.Result = &p.x
	default:
		d.ExitCode = 1
	}
	j, _ := json.Marshal(d)
	_, _ = p.out.Write(runner.AppendFrame(nil, p.nonce, runner.KindDone, j))
	return len(b), nil
}

func (p *sessionProc) Done() <-chan struct{}   { return p.done }
func (p *sessionProc) PID(context.Context) int { return 7 }
func (p *sessionProc) Wait(context.Context) (backend.ExecStatus, error) {
	return backend.ExecStatus{ExitCode: 137}, nil
}
func (p *sessionProc) Kill(context.Context) error { return p.Close() }
func (p *sessionProc) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// sessionHost starts sessionProcs and counts them; its container never
// stops.
type sessionHost struct{ started int }

func (h *sessionHost) Attach(_ context.Context, _ []string, stdout, _ io.Writer) (backend.Process, error) {
	h.started++
	return &sessionProc{out: stdout, done: make(chan struct{})}, nil
}
func (h *sessionHost) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
func (h *sessionHost) Stopped(context.Context, bool) (Stop, bool) { return Stop{}, false }
func (h *sessionHost) Gone(_ context.Context, err error) error    { return err }
func (h *sessionHost) Exited(context.Context) error               { return errors.New("exited") }
func (h *sessionHost) OOMKilled(context.Context) bool             { return false }

// slotOut is the part of a Slot's result a call checks.
type slotOut struct {
	Handled   bool
	ExitCode  int
	StateLost bool
	Result    string
}

// After an interpreter breaks the protocol the next call starts a fresh
// one and says the state was lost; after three breaks in a row the slot
// hands calls back for exec, saying why, until a reset.
func TestSlotRecoversFromProtocolError(t *testing.T) {
	host := &sessionHost{}
	s := NewSlot(runner.Python, NewBudget(1<<20), slog.New(slog.DiscardHandler))
	broken := slotOut{Handled: true, ExitCode: 1, StateLost: true}
	for i, c := range []struct {
		code  string
		reset bool
		want  slotOut
		note  string // in stderr or the fallback note
	}{
		{"x = 1", false, slotOut{Handled: true}, ""},
		{"x", false, slotOut{Handled: true, Result: "1"}, ""},
		{"break", false, broken, "the next run_code starts a fresh interpreter"},
		{"x", false, slotOut{Handled: true, ExitCode: 1, StateLost: true}, ""},
		{"x = 41", false, slotOut{Handled: true}, ""},
		{"x", false, slotOut{Handled: true, Result: "41"}, ""},
		{"break", false, broken, "fresh interpreter"},
		{"break", false, broken, "fresh interpreter"},
		{"break", false, broken, "from now on this sandbox runs each run_code in a fresh process"},
		{"x", false, slotOut{}, "variables do not persist: 3 interpreters in a row"},
		{"x = 6", true, slotOut{Handled: true}, ""},
		{"x", false, slotOut{Handled: true, Result: "6"}, ""},
	} {
		var stdout, stderr bytes.Buffer
		r, err := s.Run(context.Background(), RunRequest{Host: host, Code: c.code, Reset: c.reset, Stdout: &stdout, Stderr: &stderr, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("call %d %q: %v", i, c.code, err)
		}
		got := slotOut{Handled: r.Handled, ExitCode: r.ExitCode, StateLost: r.StateLost, Result: r.Result}
		if got != c.want || !strings.Contains(stderr.String()+r.Fallback, c.note) {
			t.Errorf("call %d %q: got %+v, stderr %q, fallback %q; want %+v and %q", i, c.code, got, stderr.String(), r.Fallback, c.want, c.note)
		}
	}
	if host.started != 5 {
		t.Errorf("started %d interpreters, want 5 (the first, one after each of 3 breaks, one after the reset)", host.started)
	}
}

// A bad frame the run's own code wrote, followed by the run's real done,
// is a break every time: the done that follows does not hide it.
func TestSlotBreakBeforeDoneWins(t *testing.T) {
	for i := range 50 {
		s := NewSlot(runner.Python, NewBudget(1<<20), slog.New(slog.DiscardHandler))
		var stdout, stderr bytes.Buffer
		r, err := s.Run(context.Background(), RunRequest{Host: &sessionHost{}, Code: "break, then done", Stdout: &stdout, Stderr: &stderr, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if !r.StateLost || r.ExitCode != 1 || !strings.Contains(stderr.String(), "fresh interpreter") {
			t.Fatalf("run %d: got exit %d, state_lost %v, stderr %q; want the break reported", i, r.ExitCode, r.StateLost, stderr.String())
		}
		s.Close()
	}
}
