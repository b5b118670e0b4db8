package bench

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The allowlist rows through a real sandbox: a host server on 127.0.0.2,
// reached by Python's urllib in an allowlist sandbox (through the agent's
// proxy on the sandbox's loopback, the agent connection and the server's
// netproxy) against curl on the host reaching it directly. Each client
// times itself, so neither side counts sandbox_exec or process start-up.
const (
	SandboxDownload = "download 100 MB, allowlist sandbox (urllib via its proxy)  vs  curl on the host (goal: ≥ 0.8 of its rate)"
	SandboxTTFB     = "first byte, allowlist sandbox (urllib via its proxy)  vs  curl on the host (goal: ≤ 3 ms added)"
)

// sandboxNetNames are the rows sandboxNetRound adds, in report order.
var sandboxNetNames = []string{SandboxDownload, SandboxTTFB}

func init() {
	// At least 0.8 of the direct rate: at most 1.25 times its time.
	targets[SandboxDownload] = 1.25
}

// fetchScript fetches argv[1] through the environment's proxy, reading in
// 1 MiB chunks, and prints the time to the response's head and to its
// end (in ns), the bytes read and the status.
const fetchScript = `import sys, time, urllib.request
o = urllib.request.build_opener()
t = time.perf_counter()
r = o.open(sys.argv[1], timeout=60)
h = time.perf_counter() - t
n = 0
while True:
    b = r.read(1 << 20)
    if not b:
        break
    n += len(b)
a = time.perf_counter() - t
print(int(h * 1e9), int(a * 1e9), n, r.status)
`

// fetchPath is where the script lives in the allowlist sandbox.
const fetchPath = "/tmp/mcp-sandbox-bench-fetch.py"

// sandboxNet is the host server the allowlist rows fetch from, and the
// allowlist sandbox whose one entry names it.
type sandboxNet struct {
	ln    net.Listener
	stop  func()
	base  string // http://127.0.0.2:PORT
	entry string // 127.0.0.2:PORT
	curl  string
	id    string // the allowlist sandbox
}

// listenSandboxNet starts the host server on 127.0.0.2 (loopback, which
// only an entry naming the address and port opens). It runs before the
// server starts, whose config names it.
func listenSandboxNet(size int) (*sandboxNet, error) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		return nil, fmt.Errorf("allowlist rows: the direct baseline needs curl: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return nil, fmt.Errorf("allowlist rows: %w", err)
	}
	srv := serveDownloads(ln, size)
	return &sandboxNet{ln: ln, stop: func() { srv.Close() }, base: "http://" + ln.Addr().String(), entry: ln.Addr().String(), curl: curl}, nil
}

// openSandboxNet creates the allowlist sandbox and writes the script to it.
func (h *Harness) openSandboxNet(ctx context.Context) error {
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	args := map[string]any{"language": "python", "network": "allowlist", "allow_domains": []string{h.net.entry}}
	if err := h.srv.call(ctx, "sandbox_create", args, &created); err != nil {
		return err
	}
	h.net.id = created.SandboxID
	return h.srv.call(ctx, "write_file", map[string]any{"sandbox_id": h.net.id, "path": fetchPath, "content": fetchScript}, nil)
}

// sandboxNetRound measures each allowlist row once, through the sandbox
// and directly, in the order swap says.
// Without the host server (listenSandboxNet failed) it measures nothing.
func (h *Harness) sandboxNetRound(ctx context.Context, swap bool) error {
	if h.net == nil {
		return nil
	}
	for _, ours := range orderOf(swap) {
		fetch := h.curlFetch
		if ours {
			fetch = h.sandboxFetch
		}
		_, all, err := fetch(ctx, "/download", proxyDownloadBytes)
		if err != nil {
			return fmt.Errorf("%s: %w", SandboxDownload, err)
		}
		h.add(SandboxDownload, ours, all)
		head, _, err := fetch(ctx, "/first", 2)
		if err != nil {
			return fmt.Errorf("%s: %w", SandboxTTFB, err)
		}
		h.add(SandboxTTFB, ours, head)
	}
	return nil
}

// sandboxFetch runs the script in the allowlist sandbox.
func (h *Harness) sandboxFetch(ctx context.Context, path string, want int64) (head, all time.Duration, err error) {
	var out runOut
	cmd := "python3 " + fetchPath + " " + h.net.base + path
	if err := h.srv.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": h.net.id, "command": cmd}, &out); err != nil {
		return 0, 0, err
	}
	if out.ExitCode != 0 {
		return 0, 0, fmt.Errorf("fetch in the sandbox: exit %d, stderr %q", out.ExitCode, out.Stderr)
	}
	var headNS, allNS, n, status int64
	if _, err := fmt.Sscan(out.Stdout, &headNS, &allNS, &n, &status); err != nil {
		return 0, 0, fmt.Errorf("fetch in the sandbox: %q: %w", out.Stdout, err)
	}
	if status != 200 || n != want {
		return 0, 0, fmt.Errorf("fetch in the sandbox: status %d, %d bytes, want 200 and %d", status, n, want)
	}
	return time.Duration(headNS), time.Duration(allNS), nil
}

// curlFetch fetches with curl on the host, straight to the server.
func (h *Harness) curlFetch(ctx context.Context, path string, want int64) (head, all time.Duration, err error) {
	out, err := exec.CommandContext(ctx, h.net.curl, "-sS", "--noproxy", "*", "-o", "/dev/null",
		"-w", "%{time_starttransfer} %{time_total} %{size_download} %{http_code}", h.net.base+path).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("curl %s: %w", path, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 4 {
		return 0, 0, fmt.Errorf("curl %s: %q", path, out)
	}
	if f[2] != strconv.FormatInt(want, 10) || f[3] != "200" {
		return 0, 0, fmt.Errorf("curl %s: status %s, %s bytes, want 200 and %d", path, f[3], f[2], want)
	}
	hs, err1 := strconv.ParseFloat(f[0], 64)
	as, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("curl %s: %q", path, out)
	}
	return time.Duration(hs * float64(time.Second)), time.Duration(as * float64(time.Second)), nil
}

// logSandboxNet logs the allowlist rows against their goals: the rate as
// a share of the direct one, and the time to first byte added (medians;
// printed, never asserted).
func (h *Harness) logSandboxNet(rep Report) {
	for _, c := range rep.Comparisons {
		switch {
		case c.Name == SandboxDownload && c.Ours.Median > 0:
			h.logf("allowlist download: %.2f of the direct rate (%.0f vs %.0f MB/s; target ≥ 0.8; printed, not asserted)",
				float64(c.Baseline.Median)/float64(c.Ours.Median), mbps(c.Ours.Median), mbps(c.Baseline.Median))
		case c.Name == SandboxTTFB:
			h.logf("allowlist first byte: %v added (%v vs %v; target ≤ 3ms; printed, not asserted)",
				c.Ours.Median-c.Baseline.Median, c.Ours.Median, c.Baseline.Median)
		}
	}
}

// mbps is the download row's rate in MB/s for a fetch taking d.
func mbps(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(proxyDownloadBytes) / 1e6 / d.Seconds()
}
