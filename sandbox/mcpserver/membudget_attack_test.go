package mcpserver_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// Twelve parallel read_file calls of a 16 MiB file, a text one and a
// binary one, through the real binary over stdio and over HTTP: what
// comes from the sandbox is counted against the server's memory budget
// from before it is read until its answer is written, so the calls wait
// for each other instead of adding up; and each answer stops where a
// client's message would. Before the budget the server peaked at 1.9 GB,
// and no answer reached the official Go SDK (over its 16 MiB message).
func TestAttackParallelBigReads(t *testing.T) {
	if testenv.Race {
		// The server is a binary of its own, built without -race: the
		// detector would watch only this test's client decode 290 MiB of
		// answers (87 s against 14 s). CI runs it without -race, under
		// gVisor and on Podman's runc.
		t.Skip("skipping under -race: the server under attack is not instrumented; run without -race")
	}
	testenv.Docker(t, testenv.PythonImage)
	env := serverEnv(t, "[limits]\nexec_timeout_seconds = 120\n")
	t.Run("stdio", func(t *testing.T) {
		p := startServer(t, env)
		parallelBigReads(t, sdkClient(t, p, nil), p.cmd.Process.Pid)
	})
	t.Run("http", func(t *testing.T) {
		p := startHTTPServer(t, append(env, "MCP_SANDBOX_TOKEN="+httpToken), "--http", "127.0.0.1:0")
		parallelBigReads(t, sdkHTTPClient(t, p.url, bearer(httpToken), nil), p.cmd.Process.Pid)
	})
}

// bearer is a transport that sends a token.
type bearer string

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}

func parallelBigReads(t *testing.T, sess *mcp.ClientSession, pid int) {
	id := createWith(t, sess, map[string]any{"memory_mb": 512})
	mustOK(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c 16777216 > big.txt && head -c 16777216 /dev/urandom > big.bin"}), "making the files")
	before := peakRSS(t, pid)
	var wg sync.WaitGroup
	for i := range 12 {
		file := []string{"big.txt", "big.bin"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := floodCall(t, sess, 5*time.Minute, "read_file", map[string]any{"sandbox_id": id, "path": file, "max_bytes": 16 << 20})
			var got struct {
				Size      int64 `json:"size"`
				Truncated bool  `json:"truncated"`
			}
			structured(t, res, &got)
			// The answer stops where a client's message would (12 MiB of
			// content) and says to read on.
			if res.IsError || got.Size != 16<<20 || !got.Truncated || !strings.Contains(text(res), "pass offset") {
				t.Errorf("read_file %s: %+v: %s", file, got, clipText(text(res)))
			}
		}()
	}
	wg.Wait()
	mb := peakRSS(t, pid)
	t.Logf("server peak RSS: %d MB before the reads, %d MB after", before, mb)
	if mb > 250 {
		t.Errorf("12 parallel 16 MiB reads took the server's peak memory to %d MB (want ≤ 250)", mb)
	}
}
