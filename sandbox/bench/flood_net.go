package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// httpServer is `mcp-sandbox serve --http` of the measured build, with no
// warm pool: the HTTP flood needs no sandbox.
type httpServer struct {
	cmd   *exec.Cmd
	url   string
	token string
	done  chan struct{}
}

var urlInLog = regexp.MustCompile(`url=(http://\S+)`)

func startHTTP(ctx context.Context, o Options, dir string) (*httpServer, error) {
	cfg := filepath.Join(dir, "http.toml")
	text := fmt.Sprintf("[images]\npython = %q\npull = %q\n\n[pool]\nsize = 0\n", o.Image, o.Pull)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	s := &httpServer{token: hex.EncodeToString(tok), done: make(chan struct{})}
	s.cmd = exec.Command(o.Server, "serve", "--http", "127.0.0.1:0")
	s.cmd.Env = append(os.Environ(), "MCP_SANDBOX_CONFIG="+cfg, "MCP_SANDBOX_STATE_DIR="+filepath.Join(dir, "state-http"), "MCP_SANDBOX_TOKEN="+s.token)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve --http: %w", o.Server, err)
	}
	found := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := urlInLog.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = s.cmd.Wait()
	}()
	select {
	case s.url = <-found:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s serve --http exited before it logged its URL", o.Server)
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	s.close()
	return nil, fmt.Errorf("%s serve --http logged no URL in 30 s", o.Server)
}

func (s *httpServer) close() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// initialize is a real client's first request, timed under the flood.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-sandbox-bench","version":"1"}}}`

func (s *httpServer) initialize(ctx context.Context) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(initialize))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("initialize with the token: %s", resp.Status)
	}
	return time.Since(start), err
}

// floodSlow opens Slow connections that trickle a body without a token
// (a byte every 200 ms) to a second server of the measured build over
// HTTP, times a real client's initialize while they are open, and counts
// those closed (or answered 401) within slowWithin.
func (h *Harness) floodSlow(ctx context.Context) Flood {
	r := Flood{Name: FloodSlow, What: strconv.Itoa(h.o.Floods.Slow) + " connections", BoundKB: floodBoundKB, LatencyBound: slowAnswer}
	s, err := startHTTP(ctx, h.o, h.dir)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer s.close()
	if _, err := s.initialize(ctx); err != nil { // warm: not the flood's
		r.Err = err.Error()
		return r
	}
	return measure(s.cmd.Process.Pid, r, func(r *Flood) error { return s.slowBodies(ctx, r, h.o.Floods.Slow) })
}

func (s *httpServer) slowBodies(ctx context.Context, r *Flood, n int) error {
	addr := strings.TrimPrefix(s.url, "http://")
	addr, path, _ := strings.Cut(addr, "/")
	head := fmt.Sprintf("POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{", path, addr)
	deadline := time.Now().Add(slowWithin)
	stop := make(chan struct{})
	defer close(stop)
	var closed, opened atomic.Int64
	var wg, started sync.WaitGroup
	for range n {
		started.Add(1)
		wg.Go(func() {
			if trickle(addr, head, deadline, stop, started.Done, &opened) {
				closed.Add(1)
			}
		})
	}
	started.Wait()
	lat, err := s.initialize(ctx)
	r.Latency = lat
	wg.Wait()
	r.Note = fmt.Sprintf("%d of %d opened; %d closed or answered 401 within %v", opened.Load(), n, closed.Load(), slowWithin)
	return err
}

// trickle opens a connection, sends head and a byte every 200 ms, and
// reports whether the server closed it (or answered) before deadline.
func trickle(addr, head string, deadline time.Time, stop <-chan struct{}, started func(), opened *atomic.Int64) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		started()
		return true // refused: not held
	}
	defer c.Close()
	opened.Add(1)
	_, err = io.WriteString(c, head)
	started()
	if err != nil {
		return true
	}
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	_ = c.SetReadDeadline(deadline)
	_, err = io.Copy(io.Discard, c)
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

// floodStalled serves a file twice ReadMiB big from a sandbox through
// sandbox_expose, has Stalled readers ask for it and never read, and
// times a fresh reader's small page.
func (h *Harness) floodStalled(ctx context.Context, r *Flood) error {
	id, stop, err := h.floodSandbox(ctx)
	if err != nil {
		return err
	}
	defer stop()
	mk := fmt.Sprintf("mkdir -p www && echo small page > www/small.txt && head -c %d /dev/zero > www/big.bin && cd www && (setsid python3 -m http.server 8001 --bind 127.0.0.1 >/dev/null 2>&1 </dev/null &)", h.o.Floods.ReadMiB<<21)
	if err := h.srv.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": id, "command": mk}, nil); err != nil {
		return err
	}
	var x struct {
		URL string `json:"url"`
	}
	if err := h.srv.call(ctx, "sandbox_expose", map[string]any{"sandbox_id": id, "port": 8001}, &x); err != nil {
		return err
	}
	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if err := waitPage(ctx, cl, x.URL+"small.txt"); err != nil {
		return err
	}
	u := strings.TrimPrefix(strings.TrimSuffix(x.URL, "/"), "http://")
	for range h.o.Floods.Stalled {
		c, err := net.Dial("tcp", u)
		if err != nil {
			return err
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /big.bin HTTP/1.1\r\nHost: %s\r\n\r\n", u)
	}
	time.Sleep(2 * time.Second) // the stalled streams' windows fill
	start := time.Now()
	err = getPage(ctx, cl, x.URL+"small.txt")
	r.Latency = time.Since(start)
	return err
}

// getPage GETs url and checks it is the small page.
func getPage(ctx context.Context, c *http.Client, url string) error {
	status, b, err := get(ctx, c, url, 4096)
	if err != nil || status != http.StatusOK || string(b) != "small page\n" {
		return fmt.Errorf("GET %s: %d %q %v", url, status, clipped(string(b)), err)
	}
	return nil
}

// get makes one request and reads its whole answer, keeping the first
// keep bytes of the body.
func get(ctx context.Context, c *http.Client, url string, keep int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, keep))
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, b, err
}

// waitPage polls url until it is the small page (30 s at most).
func waitPage(ctx context.Context, c *http.Client, url string) error {
	return poll(func() error { return getPage(ctx, c, url) })
}

// poll calls get every 100 ms until it succeeds or 30 s have passed, and
// returns its last error.
func poll(get func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := get()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
