package mcpserver_test

// The in-process layer: the real server (mcpserver.New) on the real
// engine (sandbox.NewEngine) over the in-memory backend
// (sandbox/backend/fake), served by ServeStdio over a pair of io.Pipes to
// the official Go SDK's client, inside a testing/synctest bubble. No
// Docker and no built binary: every tool's arguments, errors, output
// schemas, progress order, cancellation and audit run in milliseconds.
// The built-binary tests on Docker (the rest of this package) are the
// end-to-end layer.

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// inproc is a server on the fake backend and a client connected to it.
type inproc struct {
	host string // the copy tools' read root and write root
	eng  *sandbox.Engine
	be   *fake.Backend
	srv  *mcpserver.Server
	st   *state.Store
	cs   *mcp.ClientSession
	out  *recorder // everything the server wrote, in order
	mu   sync.Mutex
	prog []string // progress messages the client received, in order
	// toolsChanged counts the notifications/tools/list_changed received.
	toolsChanged int
}

// startInProc starts an engine on a fresh fake backend, the server on it
// and a connected client; everything stops when the test ends. Call it
// inside a synctest bubble.
func startInProc(t *testing.T, edit func(*config.Config)) *inproc {
	t.Helper()
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull = "never"
	cfg.Pool.Size = 0
	// The copy tools' host side: a directory of the test's own.
	host := t.TempDir()
	cfg.Files.ReadRoots, cfg.Files.WriteRoot = []string{host}, host
	if edit != nil {
		edit(cfg)
	}
	return startInProcOn(t, config.Static(cfg), host)
}

// startInProcOn is startInProc on the config w holds, with host the
// copy tools' root.
func startInProcOn(t *testing.T, w *config.Watcher, host string) *inproc {
	t.Helper()
	be := fake.New()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: w, State: st, OwnerID: "inproc-owner"})
	ctx, cancel := context.WithCancel(context.Background())
	engDone := make(chan struct{})
	go func() { defer close(engDone); eng.Run(ctx) }()

	srv := mcpserver.New(mcpserver.Options{Engine: eng, Version: "test", State: st})
	p := &inproc{host: host, eng: eng, be: be, st: st, out: &recorder{}, srv: srv}
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	srvDone := make(chan error, 1)
	go func() {
		err := srv.ServeStdio(ctx, inR, io.MultiWriter(p.out, outW))
		outW.Close()
		srvDone <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "inproc-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.prog = append(p.prog, r.Params.Message)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.toolsChanged++
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	p.cs = cs
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		if err := <-srvDone; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		cancel()
		<-engDone
		if err := eng.Close(context.Background()); err != nil {
			t.Errorf("close engine: %v", err)
		}
		for _, c := range be.Containers() {
			if c.Spec.Labels[backend.LabelOwner] == eng.Owner() {
				t.Errorf("container left after Close: %s", c.Name)
			}
		}
	})
	return p
}

// call calls a tool and fails the test on a protocol error (a tool's own
// error is a result with IsError).
func (p *inproc) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	p.checkOutput(t, name, res)
	return res
}

// checkOutput fails the test when res, a successful result, carries
// structured content its tool's outputSchema refuses. The server does not
// check this on each call (it builds every result from the type the
// schema is made from); every call of this layer does.
func (p *inproc) checkOutput(t *testing.T, name string, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError || res.StructuredContent == nil {
		return
	}
	tool := p.srv.MCP().GetTool(name)
	if tool == nil {
		t.Fatalf("%s: no such tool on the server", name)
	}
	raw := tool.Tool.RawOutputSchema
	if len(raw) == 0 {
		t.Fatalf("%s: structured content from a tool with no outputSchema", name)
	}
	if err := resolveSchema(t, name, raw).Validate(jsonValue(t, res.StructuredContent)); err != nil {
		t.Errorf("%s: structuredContent %v does not match its outputSchema: %v", name, res.StructuredContent, err)
	}
}

// resolveSchema resolves tool's outputSchema raw for validation.
func resolveSchema(t *testing.T, tool string, raw []byte) *jsonschema.Resolved {
	t.Helper()
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatalf("%s: outputSchema %s: %v", tool, raw, err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: outputSchema %s: %v", tool, raw, err)
	}
	return rs
}

// recorder keeps what the server wrote.
type recorder struct{ clitest.Buffer }

// messages returns the JSON-RPC messages written so far, in order.
func (r *recorder) messages(t *testing.T) []message {
	t.Helper()
	var out []message
	for l := range strings.Lines(r.String()) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m message
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("server wrote a line that is not JSON-RPC: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// create makes a sandbox and returns its id.
func (p *inproc) create(t *testing.T, args map[string]any) string {
	t.Helper()
	res := p.call(t, "sandbox_create", args)
	if res.IsError {
		t.Fatalf("sandbox_create: %s", text(res))
	}
	var out struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &out)
	return out.SandboxID
}
