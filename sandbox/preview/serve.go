package preview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
)

// newServer serves one preview's listener.
func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
}

// transport carries requests to p's port inside, one connection (an agent
// stream) each, through whichever agent the sandbox runs when it is made.
func (x *Set) transport(p *preview) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			s, err := x.cfg.Dial(ctx, p.Port)
			if err != nil {
				return nil, err
			}
			return p.track(s)
		},
		// No MaxConnsPerHost: its queue held a fresh request behind
		// readers that stopped reading (issue 31); Dial refuses at
		// once instead, and a stream standing still is cut
		// (agentconn.StallLimit).
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        30 * time.Second,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// handler answers only requests addressed to the preview's own loopback
// address (a page of another name that resolves to 127.0.0.1, DNS
// rebinding, is refused), and carries each to the port inside, upgrades
// (WebSocket) included.
func (x *Set) handler(p *preview) http.Handler {
	hp := strconv.Itoa(p.HostPort)
	allowed := map[string]bool{"127.0.0.1:" + hp: true, "localhost:" + hp: true}
	inside := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(p.Port)}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(inside)
			pr.Out.Host = pr.In.Host // the program sees the address the browser used
		},
		Transport: p.tr,
		ModifyResponse: func(*http.Response) error {
			p.answered.Store(true)
			return nil
		},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler:  x.proxyError(p),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[r.Host] {
			w.Header().Set("Connection", "close")
			http.Error(w, "mcp-sandbox: this preview answers only requests for "+p.URL+" (Host "+strconv.Quote(clip(r.Host, 100))+" refused)", http.StatusForbidden)
			return
		}
		x.cfg.Used()
		sw := stallWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
		sw.extend()
		rp.ServeHTTP(sw, r)
		sw.extend() // for the response's end, written after the handler returns
	})
}

// proxyError answers a request nothing inside answered: a 502, and once
// the program had answered and now nothing listens, the preview closes.
func (x *Set) proxyError(p *preview) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if errors.Is(err, agentconn.ErrNothingListens) && p.answered.Load() {
			w.Header().Set(ClosedHeader, "nothing listens")
			http.Error(w, fmt.Sprintf("mcp-sandbox: nothing listens on port %d in sandbox %s any more, so its preview is closed; expose the port again once a program listens on it", p.Port, x.cfg.ID), http.StatusBadGateway)
			http.NewResponseController(w).Flush()
			go x.drop(p)
			return
		}
		http.Error(w, fmt.Sprintf("mcp-sandbox: nothing answered on port %d in sandbox %s: %v", p.Port, x.cfg.ID, err), http.StatusBadGateway)
	}
}

// stallWriter gives each write to the host's reader agentconn.StallLimit, as
// a stream has: a reader that takes nothing for that long is cut, which
// ends the request and frees its stream into the sandbox. (An upgraded
// connection is hijacked, and its deadlines cleared, by then.)
type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (w stallWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(agentconn.StallLimit())) }

func (w stallWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w stallWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets the proxy flush and hijack through the ResponseController.
func (w stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clip is s cut to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
