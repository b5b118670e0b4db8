package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpProc is a server process serving streamable HTTP.
type httpProc struct {
	cmd    *exec.Cmd
	stderr *clitest.Buffer
	url    string // the MCP endpoint, from the server's log
	exited chan struct{}
	err    error // how it exited, once exited is closed
}

var urlInLog = regexp.MustCompile(`url=(http://\S+)`)

// startHTTPServer starts `mcp-sandbox serve --http ADDR …` and waits until
// it logs its URL. At cleanup it sends SIGTERM, as a supervisor would.
func startHTTPServer(t *testing.T, env []string, args ...string) *httpProc {
	t.Helper()
	cmd := exec.Command(serverBin(t), append([]string{"serve"}, args...)...)
	cmd.Env = env
	p := &httpProc{cmd: cmd, stderr: &clitest.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout := &clitest.Buffer{}
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if out := stdout.String(); out != "" {
			t.Errorf("the HTTP server wrote to stdout: %q", out)
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := urlInLog.FindStringSubmatch(p.stderr.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("server exited before serving: %v\n%s", p.err, p.stderr.String())
		case <-deadline:
			t.Fatalf("server did not log its URL in 30s:\n%s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits for the process; it fails the test unless
// the server exits 0 in time.
func (p *httpProc) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("server exit after SIGTERM: %v", p.err)
		}
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("server did not exit within 60s of SIGTERM")
	}
}

// runServe runs `mcp-sandbox serve ARGS` to its end (it is expected to
// refuse to start) and returns its exit code and stderr.
func runServe(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	srv := serverBin(t) // built before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, srv, append([]string{"serve"}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("serve %v: %v\n%s", args, err, out)
	}
	return 0, string(out)
}

// envValue returns KEY's value in env.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// sdkHTTPClient connects the official Go SDK client to url through rec.
func sdkHTTPClient(t *testing.T, url string, rec http.RoundTripper, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			onProgress(req.Params)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-http-test", Version: "1.0"}, opts)
	sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// rawPost posts one JSON-RPC message with the given headers (a "Host"
// entry sets the Host header) and returns the response's status, headers
// and body. Messages use protocol 2025-06-18, which a server without
// sessions serves without a handshake.
func rawPost(t *testing.T, url string, header http.Header, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t, time.Minute), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range header {
		for _, v := range vs {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// auditTools returns the tools named in the server's audit log, in order.
func auditTools(t *testing.T, env []string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(envValue(env, "MCP_SANDBOX_STATE_DIR"), "audit.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Tool string `json:"tool"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit log line %q: %v", line, err)
		}
		tools = append(tools, e.Tool)
	}
	return tools
}
