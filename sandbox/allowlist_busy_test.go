package sandbox_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// holdPy opens n connections to the proxy at once and holds them all,
// sending nothing; then it reads what each was told within a few seconds
// and prints, per connection, the status line's code or what ended it.
const holdPy = `import socket, sys
n = int(sys.argv[1])
socks = [socket.create_connection(("127.0.0.1", 3128), timeout=5) for _ in range(n)]
out = []
for s in socks:
    try:
        data = s.recv(200)
        out.append(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "closed")
    except socket.timeout:
        out.append("held")
    except ConnectionResetError:
        out.append("reset")
print(" ".join(out))
`

// TestAllowlistBusyGets503: the connections over network.max_connections
// (its default, 64, as many as the agent carries by default before this
// change) are told 503, never reset or dropped unanswered.
func TestAllowlistBusyGets503(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Network: sandbox.NetworkAllowlist})
	const n = 72
	res := mustExec(t, eng, sb.ID, "cat >/tmp/hold.py <<'EOF'\n"+holdPy+"\nEOF\npython3 /tmp/hold.py "+strconv.Itoa(n))
	got := strings.Fields(res.Stdout)
	if len(got) != n {
		t.Fatalf("hold: %q %q", res.Stdout, res.Stderr)
	}
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	// The held ones are answered 408 once the head timeout passes, or
	// are still held when read; the rest must be 503.
	if count["503"] != n-64 || count["reset"] != 0 || count["closed"] != 0 {
		t.Errorf("answers %v; want %d told 503 and none reset or closed unanswered", count, n-64)
	}
}
