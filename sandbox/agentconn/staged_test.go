package agentconn

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// startHost records Start's copies and attaches; an attached "agent"
// answers ready with the nonce it is sent.
type startHost struct {
	mu       sync.Mutex
	copies   []string // the copies' target files
	attached [][]string
}

func (h *startHost) Exec(_ context.Context, _ string, spec backend.ExecSpec) (backend.ExecStatus, error) {
	h.mu.Lock()
	h.copies = append(h.copies, spec.Cmd[len(spec.Cmd)-1])
	h.mu.Unlock()
	if spec.Stdin != nil {
		_, _ = io.Copy(io.Discard, spec.Stdin)
	}
	return backend.ExecStatus{}, nil
}

func (h *startHost) Attach(_ context.Context, _ string, spec backend.ExecSpec) (backend.Process, error) {
	h.mu.Lock()
	h.attached = append(h.attached, spec.Cmd)
	h.mu.Unlock()
	pr, pw := io.Pipe()
	go func() {
		nonce, _ := bufio.NewReader(pr).ReadString('\n')
		ready := runner.AppendFrame(nil, strings.TrimSpace(nonce), runner.KindReady, []byte(`{"pid":1,"version":"2","streams":true}`))
		_, _ = spec.Stdout.Write(ready)
	}()
	return &pipeProc{w: pw, done: make(chan struct{})}, nil
}

// A staged agent is run, not copied again; without one Start copies the
// agent in and runs that copy.
func TestStartStaged(t *testing.T) {
	if !agent.Has(runtime.GOARCH) {
		t.Skip("no agent built for " + runtime.GOARCH)
	}
	for _, staged := range []string{"/workspace/" + agent.FilePrefix + "staged", ""} {
		h := &startHost{}
		c, err := Start(context.Background(), h, StartRequest{
			ContainerID: "c", User: "1000:1000", Arch: runtime.GOARCH, Cat: "/bin/cat", Chmod: "/bin/chmod",
			Dir: "/workspace", Staged: staged,
		})
		if err != nil {
			t.Fatalf("staged %q: %v", staged, err)
		}
		c.proc.Close()
		want := staged
		if staged == "" {
			if len(h.copies) != 1 {
				t.Fatalf("not staged: copies %v, want one", h.copies)
			}
			want = h.copies[0]
		} else if len(h.copies) != 0 {
			t.Errorf("staged: the agent was copied again: %v", h.copies)
		}
		if len(h.attached) != 1 || h.attached[0][0] != want {
			t.Errorf("staged %q: attached %v, want %s run", staged, h.attached, want)
		}
	}
}
