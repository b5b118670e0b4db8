package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// The allowlist proxy's rows: sandbox/netproxy's handler, fed over an
// in-memory pipe as the agent's streams will feed it, against the same
// host server reached directly. They measure the handler alone (the agent
// connection's part is not in them yet).
const (
	ProxyDownload = "download 100 MB through netproxy (plain HTTP over a pipe)  vs  direct from the same host server"
	ProxyTTFB     = "first byte through netproxy, new connection  vs  direct (goal: ≤ 3 ms added)"
)

// proxyNames are the rows proxyRound adds, in report order.
var proxyNames = []string{ProxyDownload, ProxyTTFB}

// proxyDownloadBytes is what the download row fetches.
const proxyDownloadBytes = 100 << 20

func init() {
	// At least 0.8 of the direct rate: at most 1.25 times its time.
	targets[ProxyDownload] = 1.25
}

// proxyBench is a host server on 127.0.0.1, a proxy whose one entry names
// it, and a client of each way.
type proxyBench struct {
	size   int // bytes the download row fetches
	ln     net.Listener
	srv    *http.Server
	base   string
	via    *http.Client
	direct *http.Client
	cancel context.CancelFunc
}

func startProxyBench(size int) (*proxyBench, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy bench: %w", err)
	}
	srv := serveDownloads(ln, size)

	ctx, cancel := context.WithCancel(context.Background())
	p := netproxy.New(netproxy.Options{Entries: []netproxy.Entry{{Addr: ln.Addr().(*net.TCPAddr).AddrPort().Addr(), Port: ln.Addr().(*net.TCPAddr).Port}}})
	proxyURL, _ := url.Parse("http://netproxy.invalid")
	via := &http.Transport{
		Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true, DisableCompression: true,
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go p.Serve(ctx, server)
			return client, nil
		},
	}
	direct := &http.Transport{DisableKeepAlives: true, DisableCompression: true}
	return &proxyBench{
		size: size, ln: ln, srv: srv, base: "http://" + ln.Addr().String(), cancel: cancel,
		via: &http.Client{Transport: via, Timeout: time.Minute}, direct: &http.Client{Transport: direct, Timeout: time.Minute},
	}, nil
}

// serveDownloads serves /download (size bytes) and /first (two bytes)
// on ln until the returned server is closed.
func serveDownloads(ln net.Listener, size int) *http.Server {
	chunk := make([]byte, 64<<10)
	mux := http.NewServeMux()
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for left := size; left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/first", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv
}

func (b *proxyBench) close() {
	b.cancel()
	b.srv.Close()
}

// get fetches path and returns the time to the response's head and to its
// end, checking the length.
func (b *proxyBench) get(ctx context.Context, c *http.Client, path string, want int64) (head, all time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	head = time.Since(start)
	n, err := io.Copy(io.Discard, resp.Body)
	all = time.Since(start)
	if err == nil && (resp.StatusCode != 200 || n != want) {
		err = fmt.Errorf("GET %s: status %d, %d bytes, want 200 and %d", path, resp.StatusCode, n, want)
	}
	return head, all, err
}

// proxyRound measures each proxy row once, through the proxy and
// directly, in the order swap says.
func (h *Harness) proxyRound(ctx context.Context, swap bool) error {
	if h.proxy == nil {
		pb, err := startProxyBench(proxyDownloadBytes)
		if err != nil {
			return err
		}
		h.proxy = pb
	}
	for _, ours := range orderOf(swap) {
		c := h.proxy.direct
		if ours {
			c = h.proxy.via
		}
		_, all, err := h.proxy.get(ctx, c, "/download", int64(h.proxy.size))
		if err != nil {
			return fmt.Errorf("%s: %w", ProxyDownload, err)
		}
		h.add(ProxyDownload, ours, all)
		head, _, err := h.proxy.get(ctx, c, "/first", 2)
		if err != nil {
			return fmt.Errorf("%s: %w", ProxyTTFB, err)
		}
		h.add(ProxyTTFB, ours, head)
	}
	return nil
}
