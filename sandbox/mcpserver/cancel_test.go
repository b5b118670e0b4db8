package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// rawStdio is a stdio session on the fake backend driven line by line:
// what a client writes, and every line the server wrote.
type rawStdio struct {
	in    io.WriteCloser
	mu    sync.Mutex
	lines []string
}

func startRawStdio(t *testing.T) *rawStdio {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull, cfg.Pool.Size = "never", 0
	eng := sandbox.NewEngine(sandbox.Options{Backend: fake.New(), Config: config.Static(cfg), State: st, OwnerID: "raw-owner"})
	srv := mcpserver.New(mcpserver.Options{Engine: eng, Version: "test", State: st})
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &rawStdio{in: inW}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		<-served
		cancel()
		eng.Close(context.Background())
	})
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawStdio) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// answered reports whether the server wrote a response with this id.
func (r *rawStdio) answered(t *testing.T, id any) bool {
	t.Helper()
	want, _ := json.Marshal(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && string(m.ID) == string(want) {
			return true
		}
	}
	return false
}

// TestInProcCancelNoResponse: a call the client cancels with
// notifications/cancelled gets no response at all, whatever the type of
// its id, while the session goes on answering; an id the server is not
// answering is ignored.
func TestInProcCancelNoResponse(t *testing.T) {
	for _, id := range []any{2, "call-2"} {
		t.Run(fmt.Sprintf("%T", id), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := startRawStdio(t)
				idJSON, _ := json.Marshal(id)
				r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"bash","code":"sleep 600"}}}`, idJSON))
				time.Sleep(10 * time.Second)
				synctest.Wait()
				r.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"no-such-call"}}`)
				r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the person stopped it"}}`, idJSON))
				r.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
				time.Sleep(time.Minute)
				synctest.Wait()
				if !r.answered(t, 3) {
					t.Error("the ping after the cancellation got no answer")
				}
				if r.answered(t, id) {
					r.mu.Lock()
					t.Errorf("the cancelled call was answered:\n%s", strings.Join(r.lines, "\n"))
					r.mu.Unlock()
				}
			})
		})
	}
}
