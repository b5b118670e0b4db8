package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Preview times requests through sandbox_expose against the same server
// (python3 -m http.server, in the same image) reached directly, in a
// container on the host's network.
const Preview = "1,000 preview requests (sandbox_expose)  vs  same server direct (docker run --network host)"

// previewN is how many requests each side of the Preview row makes.
const previewN = 1000

// previewPath is what both sides ask for: http.server's 404 page, the
// same work on both.
const previewPath = "missing"

// previewRow starts the server in the warm sandbox and exposes it, starts
// the baseline, and times previewN requests to each, interleaved, over
// kept-alive connections. It logs the median latency added.
func (h *Harness) previewRow(ctx context.Context) (err error) {
	var out struct {
		ExitCode int `json:"exit_code"`
	}
	if err := h.srv.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": h.warmID, "command": "setsid python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 </dev/null &"}, &out); err != nil {
		return err
	}
	var x struct {
		URL string `json:"url"`
	}
	if err := h.srv.call(ctx, "sandbox_expose", map[string]any{"sandbox_id": h.warmID, "port": 8000}, &x); err != nil {
		return err
	}
	defer func() {
		_ = h.srv.call(context.WithoutCancel(ctx), "sandbox_expose", map[string]any{"sandbox_id": h.warmID, "port": 8000, "close": true}, nil)
	}()
	port, err := freePort()
	if err != nil {
		return err
	}
	// The direct server runs under the engine's default runtime: gVisor
	// has its own network stack, and with --network host it does not
	// listen on the host's loopback unless runsc itself is configured so.
	direct := h.docker
	direct.runtime = ""
	cid, err := direct.run(ctx, "run", "-d", "--network", "host", "--name", randomName("mcp-sandbox-bench-preview-"),
		h.o.Image, "python3", "-m", "http.server", strconv.Itoa(port), "--bind", "127.0.0.1")
	if err != nil {
		return err
	}
	defer func() { _ = h.docker.remove(context.WithoutCancel(ctx), cid) }()
	urls := map[bool]string{true: x.URL + previewPath, false: "http://127.0.0.1:" + strconv.Itoa(port) + "/" + previewPath}
	clients := map[bool]*http.Client{true: {Transport: &http.Transport{}}, false: {Transport: &http.Transport{}}}
	for _, ours := range []bool{true, false} {
		if err := waitAnswers(ctx, clients[ours], urls[ours]); err != nil {
			return err
		}
	}
	var added []time.Duration
	for i := range previewN {
		var d [2]time.Duration
		for _, ours := range orderOf(i%2 == 1) {
			start := time.Now()
			if err := getOnce(ctx, clients[ours], urls[ours]); err != nil {
				return fmt.Errorf("%s: %w", Preview, err)
			}
			el := time.Since(start)
			h.add(Preview, ours, el)
			if ours {
				d[0] = el
			} else {
				d[1] = el
			}
		}
		added = append(added, d[0]-d[1])
	}
	sort.Slice(added, func(i, j int) bool { return added[i] < added[j] })
	h.logf("preview: median latency added per request %v (target ≤ 2ms; printed, not asserted)", added[len(added)/2])
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// getOnce makes one request and reads its answer: http.server's 404.
func getOnce(ctx context.Context, c *http.Client, url string) error {
	status, _, err := get(ctx, c, url, 0)
	if err != nil {
		return err
	}
	if status != http.StatusNotFound {
		return fmt.Errorf("GET %s: %d, want http.server's 404", url, status)
	}
	return nil
}

// waitAnswers polls url until the server behind it answers (30 s at most).
func waitAnswers(ctx context.Context, c *http.Client, url string) error {
	return poll(func() error { return getOnce(ctx, c, url) })
}
