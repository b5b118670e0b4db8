package sandbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// parallelFetchPy fetches argv[1] argv[2] times at once through the
// environment's proxy and prints each body's length and SHA-256.
const parallelFetchPy = `
import hashlib, sys, threading, urllib.request
out = [None] * int(sys.argv[2])
def get(i):
    h, n = hashlib.sha256(), 0
    with urllib.request.urlopen(sys.argv[1], timeout=60) as r:
        while True:
            b = r.read(1 << 16)
            if not b:
                break
            h.update(b)
            n += len(b)
    out[i] = "%d %s" % (n, h.hexdigest())
ts = [threading.Thread(target=get, args=(i,)) for i in range(len(out))]
for t in ts: t.start()
for t in ts: t.join()
print("\n".join(str(o) for o in out))
`

// TestAllowlistDownload: downloads of many windows each, two at once,
// reach a program in an allowlist sandbox whole and in order through the
// agent's proxy, with the window the agent announces (its ready frame's,
// agent.AgentWindow) and its credit given back a quarter window at a time.
func TestAllowlistDownload(t *testing.T) {
	t.Parallel()
	body := make([]byte, 8<<20+12345) // not a multiple of any frame or window
	r := rand.NewChaCha8([32]byte{21})
	_, _ = r.Read(body)
	sum := sha256.Sum256(body)
	want := strconv.Itoa(len(body)) + " " + hex.EncodeToString(sum[:])
	port := hostServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}), nil)
	entry := "127.0.0.2:" + strconv.Itoa(port)
	eng, _ := newEngineWith(t, engineOptions{scoped: true, edit: func(c *config.Config) {
		c.Network.AllowDomains = []string{entry}
	}})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Network: sandbox.NetworkAllowlist, AllowDomains: []string{entry}})
	res := mustExec(t, eng, sb.ID, "cat >/tmp/pfetch.py <<'EOF'\n"+parallelFetchPy+"EOF\npython3 /tmp/pfetch.py http://"+entry+"/ 2")
	if got := strings.Split(strings.TrimSpace(res.Stdout), "\n"); len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("downloads in the sandbox: %q (stderr %q), want twice %q", res.Stdout, res.Stderr, want)
	}
	w, err := sandbox.AgentWindowForTest(t.Context(), eng, sb.ID)
	if err != nil || w != agent.AgentWindow {
		t.Errorf("the agent's window: %d %v, want %d", w, err, agent.AgentWindow)
	}
}
