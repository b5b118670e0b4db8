package mcpserver_test

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// listedProcess is a background process as sandbox_list reports it.
type listedProcess struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	LogPath string `json:"log_path"`
	Running bool   `json:"running"`
}

// processes returns sandbox id's background processes from sandbox_list.
func processes(t *testing.T, sess *mcp.ClientSession, id string) []listedProcess {
	t.Helper()
	var list struct {
		Sandboxes []struct {
			ID        string          `json:"sandbox_id"`
			Processes []listedProcess `json:"processes"`
		} `json:"sandboxes"`
	}
	structured(t, call(t, sess, "sandbox_list", nil), &list)
	for _, s := range list.Sandboxes {
		if s.ID == id {
			return s.Processes
		}
	}
	t.Fatalf("sandbox %s not listed: %+v", id, list)
	return nil
}

// The built server runs a web server with background: true: the call
// returns at once, the server outlives the call's timeout, sandbox_expose
// reaches it, sandbox_list lists it running, its log is readable, and
// `kill PID` stops it (and the python it started).
func TestBackgroundServerExposed(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	id := createSandboxes(t, sess, 1)[0]
	call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "index.html", "content": "preview\n"})
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "python3 -m http.server 8000 --bind 127.0.0.1", "background": true, "timeout_seconds": 1})
	var st struct {
		PID     int    `json:"pid"`
		LogPath string `json:"log_path"`
	}
	structured(t, res, &st)
	if res.IsError || st.PID <= 0 || st.LogPath == "" {
		t.Fatalf("background start: %+v %s", st, text(res))
	}
	probe := `python3 -c "import socket; socket.create_connection(('127.0.0.1', 8000), 1)"`
	waitExitCode(t, sess, id, probe, 0)
	// Past the start's timeout_seconds: the server is not bound by it.
	call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "sleep 2"})
	res = call(t, sess, "sandbox_expose", map[string]any{"sandbox_id": id, "port": 8000})
	var x struct {
		URL string `json:"url"`
	}
	structured(t, res, &x)
	if res.IsError {
		t.Fatal(text(res))
	}
	resp, err := http.Get(x.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "preview\n" {
		t.Fatalf("GET %s: %d %q", x.URL, resp.StatusCode, body)
	}
	if ps := processes(t, sess, id); len(ps) != 1 || ps[0].PID != st.PID || !ps[0].Running || ps[0].LogPath != st.LogPath {
		t.Errorf("sandbox_list processes: %+v, want pid %d running", ps, st.PID)
	}
	// http.server logs each request on stderr, which goes to the log.
	if res := call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": st.LogPath}); !strings.Contains(text(res), `"GET / HTTP/1.1" 200`) {
		t.Errorf("log %s: %s", st.LogPath, text(res))
	}
	if res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "kill " + strconv.Itoa(st.PID)}); res.IsError || !strings.Contains(text(res), "exit_code: 0") {
		t.Fatalf("kill: %s", text(res))
	}
	waitExitCode(t, sess, id, probe, 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ps := processes(t, sess, id)
		if len(ps) == 1 && !ps[0].Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox_list after kill: %+v", ps)
		}
	}
}

// waitExitCode runs cmd in sandbox id until it exits with want.
func waitExitCode(t *testing.T, sess *mcp.ClientSession, id, cmd string, want int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var st struct {
			ExitCode int `json:"exit_code"`
		}
		structured(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": cmd}), &st)
		if st.ExitCode == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exits %d, want %d", cmd, st.ExitCode, want)
		}
	}
}

// A one-shot run_code runs in an image images.allowed lets it name, and
// is refused one that it does not.
func TestRunCodeOneShotImage(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage, testenv.PlotImage)
	env := serverEnv(t, "")
	allowImages(t, env, testenv.PlotImage)
	p := startServer(t, env)
	sess := sdkClient(t, p, nil)
	// Only the plot image has matplotlib.
	res := call(t, sess, "run_code", map[string]any{"code": "import matplotlib\nprint('has', matplotlib.__name__)", "image": testenv.PlotImage})
	if res.IsError || !strings.Contains(text(res), "has matplotlib") {
		t.Fatalf("allowed image: %s", text(res))
	}
	res = call(t, sess, "run_code", map[string]any{"code": "print(1)", "image": testenv.TinyImage})
	if !res.IsError || !strings.Contains(text(res), "not allowed") {
		t.Errorf("refused image: %s", text(res))
	}
}

// allowImages adds images.allowed to the config serverEnv wrote.
func allowImages(t *testing.T, env []string, images ...string) {
	t.Helper()
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "MCP_SANDBOX_CONFIG="); ok {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			q := make([]string, len(images))
			for i, im := range images {
				q[i] = strconv.Quote(im)
			}
			b = []byte(strings.Replace(string(b), "[images]\n", "[images]\nallowed = ["+strings.Join(q, ", ")+"]\n", 1))
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no MCP_SANDBOX_CONFIG in the environment")
}

// A run_code that must wait for the previous one in the same sandbox
// hears so at once, and its timeout starts when it runs.
func TestBusySandboxProgress(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	var mu sync.Mutex
	var msgs []string
	sess := sdkClient(t, p, func(pp *mcp.ProgressNotificationParams) {
		mu.Lock()
		msgs = append(msgs, pp.Message)
		mu.Unlock()
	})
	id := createSandboxes(t, sess, 1)[0]
	started := make(chan struct{})
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"sandbox_id": id, "code": "import time\nprint('first', flush=True)\ntime.sleep(4)"}}
		params.SetProgressToken("first")
		res, err := sess.CallTool(testContext(t, 2*time.Minute), params)
		if err != nil {
			t.Error(err)
		}
		first <- res
	}()
	go func() {
		// The first call's output is what says it runs.
		defer close(started)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			n := len(msgs)
			mu.Unlock()
			if n > 0 {
				return
			}
		}
	}()
	<-started
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"sandbox_id": id, "code": "print('second')", "timeout_seconds": 2}}
	params.SetProgressToken("second")
	res, err := sess.CallTool(testContext(t, 2*time.Minute), params)
	if err != nil || res.IsError || !strings.Contains(text(res), "second") || strings.Contains(text(res), "timed out") {
		t.Fatalf("second call: %v %s", err, text(res))
	}
	if r := <-first; r == nil || r.IsError {
		t.Fatalf("first call: %v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(msgs, "\n"), "waiting for the previous call in this sandbox, running ") {
		t.Errorf("progress messages %q lack the wait", msgs)
	}
}

// A run_code in the resident interpreter that times out serving HTTP is
// told to use background.
func TestRunCodeServerTimeoutHint(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	id := createSandboxes(t, sess, 1)[0]
	code := "import http.server\ns = http.server.HTTPServer(('127.0.0.1', 8001), http.server.SimpleHTTPRequestHandler)\nprint('Serving HTTP on 127.0.0.1 port 8001', flush=True)\ns.serve_forever()"
	res := call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": code, "timeout_seconds": 2})
	if !strings.Contains(text(res), "timed out") || !strings.Contains(text(res), "background: true") {
		t.Errorf("run_code: %s", text(res))
	}
}
