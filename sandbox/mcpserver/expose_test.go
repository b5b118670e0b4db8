package mcpserver_test

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// exposeWeb starts python3 -m http.server on port 8000 in sandbox id and
// exposes it; it returns the url and host port.
func exposeWeb(t *testing.T, sess *mcp.ClientSession, id string) (string, int) {
	t.Helper()
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo preview > index.html; setsid python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 </dev/null &"})
	if res.IsError {
		t.Fatal(text(res))
	}
	probe := `python3 -c "import socket; socket.create_connection(('127.0.0.1', 8000), 1)"`
	for deadline := time.Now().Add(20 * time.Second); ; {
		var st struct {
			ExitCode int `json:"exit_code"`
		}
		structured(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": probe}), &st)
		if st.ExitCode == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("http.server did not start in the sandbox")
		}
		time.Sleep(200 * time.Millisecond)
	}
	res = call(t, sess, "sandbox_expose", map[string]any{"sandbox_id": id, "port": 8000})
	if res.IsError {
		t.Fatal(text(res))
	}
	var x struct {
		URL      string `json:"url"`
		HostPort int    `json:"host_port"`
	}
	structured(t, res, &x)
	if x.URL != "http://127.0.0.1:"+strconv.Itoa(x.HostPort)+"/" {
		t.Fatalf("sandbox_expose: %+v", x)
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
	return x.URL, x.HostPort
}

// listening reports whether something accepts connections on the host's
// port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func waitNotListening(t *testing.T, port int, why string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); listening(port); {
		if time.Now().After(deadline) {
			t.Fatalf("port %d still listens %s", port, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The built server previews a sandbox's web server (network none), lists
// it in sandbox_list, and stops listening when the sandbox stops and when
// its client goes away (stdin closes).
func TestExposeOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	ids := createSandboxes(t, sess, 2)
	url, port := exposeWeb(t, sess, ids[0])
	var list struct {
		Sandboxes []struct {
			ID      string `json:"sandbox_id"`
			Exposed []struct {
				Port int    `json:"port"`
				URL  string `json:"url"`
			} `json:"exposed"`
		} `json:"sandboxes"`
	}
	res := call(t, sess, "sandbox_list", nil)
	structured(t, res, &list)
	if len(list.Sandboxes) != 2 || list.Sandboxes[0].ID != ids[0] || len(list.Sandboxes[0].Exposed) != 1 ||
		list.Sandboxes[0].Exposed[0].URL != url || list.Sandboxes[0].Exposed[0].Port != 8000 || len(list.Sandboxes[1].Exposed) != 0 ||
		!strings.Contains(text(res), url) {
		t.Errorf("sandbox_list: %+v\n%s", list, text(res))
	}
	if res := call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": ids[0]}); res.IsError {
		t.Fatal(text(res))
	}
	waitNotListening(t, port, "after sandbox_stop")

	_, port = exposeWeb(t, sess, ids[1])
	p.stdin.Close()
	waitNotListening(t, port, "after the server's stdin closed")
}
