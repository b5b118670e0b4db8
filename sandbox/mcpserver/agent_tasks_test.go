package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// resultBudget is the most a model reads of any one result, the whole
// output of a 200,000-line command included (tools/list's budget is
// toolsListBudget).
const resultBudget = 24 << 10

// agent plays an assistant that knows only what the server says of
// itself: the instructions, tools/list and each result. Every call's
// result is held to the result budget, and every next step takes its
// ids, paths and URLs from what an earlier result said.
type agent struct {
	t    *testing.T
	sess *mcp.ClientSession
}

// call makes one tool call and returns its text and structured content.
func (a *agent) call(name string, args map[string]any) (string, map[string]any, bool) {
	a.t.Helper()
	res := call(a.t, a.sess, name, args)
	raw, err := json.Marshal(res)
	if err != nil {
		a.t.Fatal(err)
	}
	if len(raw) > resultBudget {
		a.t.Errorf("%s: the result is %d bytes, over the %d-byte budget", name, len(raw), resultBudget)
	}
	var sc map[string]any
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		_ = json.Unmarshal(b, &sc)
	}
	return text(res), sc, res.IsError
}

// must is call for a step that must work.
func (a *agent) must(name string, args map[string]any) (string, map[string]any) {
	a.t.Helper()
	txt, sc, isErr := a.call(name, args)
	if isErr {
		a.t.Fatalf("%s: %s", name, txt)
	}
	return txt, sc
}

// str is a string field of a structured result the model was given.
func str(t *testing.T, sc map[string]any, key string) string {
	t.Helper()
	s, _ := sc[key].(string)
	if s == "" {
		t.Fatalf("the result says no %s: %v", key, sc)
	}
	return s
}

// TestAgentTasks: ten everyday tasks, each done as an assistant would
// with nothing but the MCP surface of the built server over stdio.
func TestAgentTasks(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage, testenv.PlotImage)
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "sales.csv"), []byte("month,sales\njan,3\nfeb,5\nmar,8\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "arith.py"), []byte("def add(a, b):\n    return a - b\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "test_arith.py"), []byte("import unittest\nfrom arith import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\nif __name__ == '__main__':\n    unittest.main()\n"), 0o644)
	port := serveOn127002(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pipURL, _, _ := testenv.PackageIndex(t, l, nil)
	env := serverEnv(t, fmt.Sprintf("[files]\nread_roots = [%q]\nwrite_root = %q\n[network]\nallow_domains = [\"127.0.0.2:%d\"]\ninstall_env = { PIP_INDEX_URL = %q }\n",
		home, filepath.Join(home, "out"), port, pipURL))
	allowImage(t, env, testenv.PlotImage)
	p := startServer(t, env)
	a := &agent{t: t, sess: sdkClient(t, p, nil)}

	tools, err := a.sess.ListTools(testContext(t, time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(tools)
	if len(raw) > toolsListBudget {
		t.Errorf("tools/list is %d bytes, over the %d-byte budget", len(raw), toolsListBudget)
	}

	t.Run("chart from the person's CSV", func(t *testing.T) { chartTask(a.fork(t), filepath.Join(proj, "sales.csv")) })
	t.Run("run and fix the person's tests", func(t *testing.T) { fixTestsTask(a.fork(t), proj) })
	t.Run("install a package", func(t *testing.T) {
		a := a.fork(t)
		_, sc := a.must("sandbox_create", nil)
		id := str(t, sc, "sandbox_id")
		a.must("install_packages", map[string]any{"sandbox_id": id, "packages": []string{"mcpsbxdemo==1.0"}})
		if txt, _ := a.must("run_code", map[string]any{"sandbox_id": id, "code": "import mcpsbxdemo\nmcpsbxdemo.VALUE"}); !strings.Contains(txt, "42") {
			t.Errorf("the installed package: %s", txt)
		}
	})
	everyBackendTasks(t, a, port)
	t.Logf("tools/list %d bytes", len(raw))
}

// everyBackendTasks are the tasks that need nothing but the python image
// and the host's loopback: arithmetic, state, an allowed fetch (port on
// 127.0.0.2, in network.allow_domains), a web app, a long loop, big
// output, and last the clean-up.
func everyBackendTasks(t *testing.T, a *agent, port int) {
	t.Run("arithmetic", func(t *testing.T) {
		txt, _ := a.fork(t).must("run_code", map[string]any{"code": "2**100"})
		if !strings.Contains(txt, "1267650600228229401496703205376") {
			t.Errorf("2**100: %s", txt)
		}
	})
	t.Run("keep state", func(t *testing.T) {
		a := a.fork(t)
		_, sc := a.must("sandbox_create", nil)
		id := str(t, sc, "sandbox_id")
		a.must("run_code", map[string]any{"sandbox_id": id, "code": "x = 41"})
		if txt, _ := a.must("run_code", map[string]any{"sandbox_id": id, "code": "x + 1"}); !strings.Contains(txt, "42") {
			t.Errorf("state lost: %s", txt)
		}
	})
	t.Run("fetch from an allowed host", func(t *testing.T) {
		a := a.fork(t)
		_, sc := a.must("sandbox_create", map[string]any{"network": "allowlist"})
		id := str(t, sc, "sandbox_id")
		code := fmt.Sprintf("import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.2:%d/data').read().decode())", port)
		if txt, _ := a.must("run_code", map[string]any{"sandbox_id": id, "code": code}); !strings.Contains(txt, "hello /data") {
			t.Errorf("fetch: %s", txt)
		}
	})
	t.Run("show a web app", func(t *testing.T) { webAppTask(a.fork(t)) })
	t.Run("a long loop", func(t *testing.T) { longLoopTask(a.fork(t)) })
	t.Run("big output", func(t *testing.T) { bigOutputTask(a.fork(t)) })
	t.Run("clean up", func(t *testing.T) {
		a := a.fork(t)
		a.must("sandbox_stop", map[string]any{"all": true})
		if _, sc := a.must("sandbox_list", nil); len(sc["sandboxes"].([]any)) != 0 {
			t.Errorf("sandboxes left after stop all: %v", sc["sandboxes"])
		}
	})
}

// fork is the same assistant in a subtest.
func (a *agent) fork(t *testing.T) *agent { return &agent{t: t, sess: a.sess} }

// chartTask: a sandbox from an allowed image with matplotlib, the
// person's CSV copied in, and a chart that comes back as one image.
func chartTask(a *agent, csv string) {
	t := a.t
	_, sc := a.must("sandbox_create", map[string]any{"image": testenv.PlotImage})
	id := str(t, sc, "sandbox_id")
	_, sc = a.must("copy_in", map[string]any{"sandbox_id": id, "host_path": csv})
	dest := str(t, sc, "dest_path")
	code := fmt.Sprintf("import csv\nimport matplotlib.pyplot as plt\nrows = list(csv.DictReader(open(%q)))\nplt.bar([r['month'] for r in rows], [int(r['sales']) for r in rows])\nplt.show()", dest)
	res := call(t, a.sess, "run_code", map[string]any{"sandbox_id": id, "code": code})
	images := 0
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			images++
		}
	}
	if res.IsError || images != 1 {
		t.Errorf("chart: %d images, error %v: %s", images, res.IsError, text(res))
	}
}

// fixTestsTask: the person's project copied in, its tests run and failing,
// the fix written, the tests passing, the fixed file copied out.
func fixTestsTask(a *agent, proj string) {
	t := a.t
	_, sc := a.must("sandbox_create", nil)
	id := str(t, sc, "sandbox_id")
	_, sc = a.must("copy_in", map[string]any{"sandbox_id": id, "host_path": proj})
	dest := str(t, sc, "dest_path")
	_, sc = a.must("sandbox_exec", map[string]any{"sandbox_id": id, "command": "python3 -m unittest", "workdir": dest})
	if code, _ := sc["exit_code"].(float64); code == 0 {
		t.Fatalf("the broken tests passed: %v", sc)
	}
	a.must("write_file", map[string]any{"sandbox_id": id, "path": dest + "/arith.py", "content": "def add(a, b):\n    return a + b\n"})
	_, sc = a.must("sandbox_exec", map[string]any{"sandbox_id": id, "command": "python3 -m unittest", "workdir": dest})
	if code, _ := sc["exit_code"].(float64); code != 0 {
		t.Fatalf("the fixed tests failed: %v", sc)
	}
	_, sc = a.must("copy_out", map[string]any{"sandbox_id": id, "path": dest + "/arith.py"})
	b, err := os.ReadFile(str(t, sc, "host_path"))
	if err != nil || !strings.Contains(string(b), "a + b") {
		t.Errorf("copied out: %q %v", b, err)
	}
}

// webAppTask: a server started in the background, exposed, and answering
// on the URL the result gave.
func webAppTask(a *agent) {
	t := a.t
	_, sc := a.must("sandbox_create", nil)
	id := str(t, sc, "sandbox_id")
	a.must("write_file", map[string]any{"sandbox_id": id, "path": "index.html", "content": "<h1>hi from the app</h1>"})
	_, sc = a.must("sandbox_exec", map[string]any{"sandbox_id": id, "command": "python3 -m http.server 8000 --bind 127.0.0.1", "background": true})
	str(t, sc, "log_path")
	var url string
	deadline := time.Now().Add(30 * time.Second)
	for {
		txt, sc, isErr := a.call("sandbox_expose", map[string]any{"sandbox_id": id, "port": 8000})
		if !isErr {
			url = str(t, sc, "url")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expose: %s", txt)
		}
		time.Sleep(500 * time.Millisecond)
	}
	var body []byte
	deadline = time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v %s", url, err, body)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !strings.Contains(string(body), "hi from the app") {
		t.Errorf("the page: %s", body)
	}
}

// longLoopTask: a loop longer than the call's timeout runs in the
// background; its log, at the path the result named, fills as it runs.
func longLoopTask(a *agent) {
	t := a.t
	_, sc := a.must("sandbox_create", nil)
	id := str(t, sc, "sandbox_id")
	_, sc = a.must("sandbox_exec", map[string]any{"sandbox_id": id, "command": "for i in $(seq 1 4); do echo tick $i; sleep 1; done; echo done", "background": true, "timeout_seconds": 1})
	log := str(t, sc, "log_path")
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, sc := a.must("read_file", map[string]any{"sandbox_id": id, "path": log})
		if c, _ := sc["content"].(string); strings.Contains(c, "tick 4\ndone") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loop's log: %v", sc)
		}
		time.Sleep(time.Second)
	}
}

// bigOutputTask: 200,000 lines come back within the result budget, and
// the whole output is at the path the result named.
func bigOutputTask(a *agent) {
	t := a.t
	_, sc := a.must("sandbox_create", nil)
	id := str(t, sc, "sandbox_id")
	txt, sc := a.must("sandbox_exec", map[string]any{"sandbox_id": id, "command": "seq 1 200000"})
	if !strings.Contains(txt, "1\n2\n3\n") || !strings.Contains(txt, "199999\n200000") {
		t.Errorf("the head or the tail of the output is missing: %.200s", txt)
	}
	file := str(t, sc, "output_file")
	txt, _ = a.must("sandbox_exec", map[string]any{"sandbox_id": id, "command": "wc -l < " + file + " && sed -n 100000p " + file})
	if !strings.Contains(txt, "200000") || !strings.Contains(txt, "100000") {
		t.Errorf("the whole output at %s: %s", file, txt)
	}
}

// allowImage adds image to images.allowed in the config env names.
func allowImage(t *testing.T, env []string, image string) {
	t.Helper()
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "MCP_SANDBOX_CONFIG="); ok {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s := strings.Replace(string(b), "pull = \"never\"\n", fmt.Sprintf("pull = \"never\"\nallowed = [%q]\n", image), 1)
			if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no config in the environment")
}
