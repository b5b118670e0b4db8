package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpclient"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// sdkClient connects the official Go SDK client to a real server process.
func sdkClient(t *testing.T, p *proc, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			onProgress(req.Params)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0"}, opts)
	sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, p.stderr.String())
	}
	return sess
}

func call(t *testing.T, sess *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(testContext(t, 2*time.Minute), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult, into any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	// sandbox_exec and run_code send their output in the text only.
	if out := outputOf(text(res)); len(out) > 0 {
		b, _ = json.Marshal(out)
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("output %s: %v", b, err)
		}
	}
}

// outputOf reads the output sections of an exec or run_code text.
func outputOf(text string) map[string]string { return mcpclient.OutputOf(text) }

type execOut struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	TimedOut   bool   `json:"timed_out"`
	Truncated  bool   `json:"truncated"`
	OOMKilled  bool   `json:"oom_killed"`
	SandboxID  string `json:"sandbox_id"`
	DurationMS int64  `json:"duration_ms"`
}

// TestGoSDKClient drives the tools of the real binary on the real engine
// with the official SDK client; the bad inputs are tested in process
// (TestInProcInvalidArguments).
func TestGoSDKClient(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	ctx := testContext(t, 5*time.Minute)

	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
		if tool.OutputSchema == nil {
			t.Errorf("%s has no outputSchema", tool.Name)
		}
	}
	for _, want := range []string{"sandbox_create", "sandbox_exec", "run_code", "sandbox_list", "sandbox_stop"} {
		if !names[want] {
			t.Errorf("tool %s missing", want)
		}
	}
	checkAnnotationsOnWire(t, p)

	// The happy path.
	res := call(t, sess, "sandbox_create", map[string]any{"language": "python", "memory_mb": 256})
	if res.IsError {
		t.Fatalf("create: %s", text(res))
	}
	var created struct {
		SandboxID string `json:"sandbox_id"`
		Network   string `json:"network"`
		Limits    struct {
			MemoryMB int `json:"memory_mb"`
		} `json:"limits"`
		ExpiresAt string `json:"expires_at"`
	}
	structured(t, res, &created)
	if created.SandboxID == "" || created.Network != "none" || created.Limits.MemoryMB != 256 || created.ExpiresAt == "" {
		t.Errorf("create result %+v", created)
	}
	id := created.SandboxID

	var ex execOut
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo hi; echo oops >&2; exit 4"})
	structured(t, res, &ex)
	if res.IsError || ex.ExitCode != 4 || ex.Stdout != "hi\n" || ex.Stderr != "oops\n" {
		t.Errorf("exec: %+v %s", ex, text(res))
	}
	res = call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": "print(2**10)"})
	structured(t, res, &ex)
	if res.IsError || ex.Stdout != "1024\n" {
		t.Errorf("run_code in sandbox: %+v %s", ex, text(res))
	}
	res = call(t, sess, "run_code", map[string]any{"code": "import os; print(os.getuid())"})
	structured(t, res, &ex)
	if res.IsError || ex.Stdout != "1000\n" || ex.SandboxID == id {
		t.Errorf("one-shot run_code: %+v %s", ex, text(res))
	}
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "sleep 1000", "timeout_seconds": 2})
	structured(t, res, &ex)
	if res.IsError || !ex.TimedOut {
		t.Errorf("timeout: %+v %s", ex, text(res))
	}

	res = call(t, sess, "sandbox_list", nil)
	var list struct {
		Sandboxes []struct {
			SandboxID string `json:"sandbox_id"`
			Usage     struct {
				MemoryBytes uint64 `json:"memory_bytes"`
				Pids        uint64 `json:"pids"`
			} `json:"usage"`
			Limits struct {
				MemoryMB int `json:"memory_mb"`
			} `json:"limits"`
		} `json:"sandboxes"`
	}
	structured(t, res, &list)
	if len(list.Sandboxes) != 1 || list.Sandboxes[0].SandboxID != id || list.Sandboxes[0].Usage.MemoryBytes == 0 || list.Sandboxes[0].Usage.Pids == 0 {
		t.Errorf("list: %+v", list)
	}

	logs, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "sandbox://" + id + "/logs"})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs.Contents) != 1 || !strings.Contains(logs.Contents[0].Text, "echo hi") || !strings.Contains(logs.Contents[0].Text, "print(2**10)") {
		t.Errorf("logs: %+v", logs.Contents)
	}

	// Bad input (isError results with advice) is the in-process layer's:
	// TestInProcInvalidArguments.

	res = call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": id})
	if res.IsError || !strings.Contains(text(res), id) {
		t.Errorf("stop: %s", text(res))
	}
	res = call(t, sess, "sandbox_list", nil)
	structured(t, res, &list)
	if len(list.Sandboxes) != 0 {
		t.Errorf("after stop: %+v", list)
	}
	assertOnlyJSONRPC(t, p)
}

// checkAnnotationsOnWire checks the raw tools/list response: every tool
// sets all four hints explicitly.
func checkAnnotationsOnWire(t *testing.T, p *proc) {
	t.Helper()
	p.wire.mu.Lock()
	defer p.wire.mu.Unlock()
	for _, l := range p.wire.lines {
		var m struct {
			Result struct {
				Tools []struct {
					Name        string         `json:"name"`
					Annotations map[string]any `json:"annotations"`
				} `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal(l, &m) != nil || len(m.Result.Tools) == 0 {
			continue
		}
		for _, tool := range m.Result.Tools {
			for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				if _, ok := tool.Annotations[k]; !ok {
					t.Errorf("%s: annotation %s not set", tool.Name, k)
				}
			}
		}
		return
	}
	t.Error("no tools/list response on the wire")
}

// assertOnlyJSONRPC checks nothing but JSON-RPC messages reached stdout.
func assertOnlyJSONRPC(t *testing.T, p *proc) {
	t.Helper()
	for _, m := range p.wire.messages(t) {
		if m.Method == "" && len(m.ID) == 0 {
			t.Errorf("a stdout line is neither a request, a notification nor a response: %+v", m)
		}
	}
}

// TestProgressBeforeResultGoSDK makes 100 calls with progress tokens, some
// at once, and checks on the wire that every progress notification of a
// call comes before that call's result, and that the client saw them.
func TestProgressBeforeResultGoSDK(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	var mu sync.Mutex
	got := map[string]int{}
	sess := sdkClient(t, p, func(pp *mcp.ProgressNotificationParams) {
		mu.Lock()
		got[fmt.Sprint(pp.ProgressToken)]++
		mu.Unlock()
	})
	res := call(t, sess, "sandbox_create", nil)
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &created)

	const calls = 100
	callConcurrently(calls, 8, func(i int) {
		params := &mcp.CallToolParams{Name: "sandbox_exec", Arguments: map[string]any{"sandbox_id": created.SandboxID, "command": progressCommand(i)}}
		params.SetProgressToken(fmt.Sprintf("tok-%d", i))
		r, err := sess.CallTool(testContext(t, time.Minute), params)
		if err != nil || r.IsError {
			t.Errorf("call %d: %v %v", i, err, r)
		}
	})
	checkProgressOrder(t, p.wire, calls)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != calls {
		t.Errorf("client saw progress for %d calls, want %d", len(got), calls)
	}
}

// checkProgressOrder checks the stdio wire with progressFaults (one
// stream: stdout).
func checkProgressOrder(t *testing.T, w *wire, calls int) {
	t.Helper()
	w.mu.Lock()
	msgs := make([]wireMsg, len(w.lines))
	for i, l := range w.lines {
		msgs[i] = wireMsg{raw: l}
	}
	w.mu.Unlock()
	for _, f := range progressFaults(msgs, calls) {
		t.Error(f)
	}
}

// callConcurrently runs call(0) … call(n-1), parallel at a time.
func callConcurrently(n, parallel int, call func(i int)) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			call(i)
		}()
	}
	wg.Wait()
}
