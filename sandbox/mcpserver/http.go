package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// HTTPPath is where the streamable HTTP transport serves MCP.
const HTTPPath = "/mcp"

// Limits of the HTTP transport.
const (
	// httpShutdownTimeout bounds how long a stopping server waits for the
	// calls in flight (already cancelled) to return.
	httpShutdownTimeout = 10 * time.Second
	// httpReadHeaderTimeout drops connections that never finish their
	// request headers.
	httpReadHeaderTimeout = 10 * time.Second
	// httpIdleTimeout closes keep-alive connections nobody uses.
	httpIdleTimeout = 2 * time.Minute
)

// HTTPOptions configures the streamable HTTP transport.
type HTTPOptions struct {
	// Token is the bearer token every request must carry. Required.
	Token string
	// AllowedOrigins are the browser origins served (http.allowed_origins);
	// a request with any other Origin header is refused.
	AllowedOrigins []string
}

// ServeStreamableHTTP serves MCP over streamable HTTP at HTTPPath on ln
// until ctx is done, then stops accepting, cancels the calls in flight and
// waits (bounded) for them to return. ln decides the address; the caller
// checks that it is one the user allowed.
//
// Every request passes, in order: the Origin check (403 for a web page
// whose origin is not in o.AllowedOrigins), the bearer token check (401),
// mcp-go's Host check against DNS rebinding (403), and only then reaches
// MCP. See httpGuard, trackDelivery, and http_limits.go for the timing
// of each phase and the caps on connections.
func (s *Server) ServeStreamableHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	if o.Token == "" {
		return errors.New("serve http: no token")
	}
	h := s.newHTTPHandler(o.Token, o.AllowedOrigins)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		// Requests inherit ctx, so stopping the server cancels the tool
		// calls in flight (and the processes they run), as on stdio.
		BaseContext: func(net.Listener) context.Context { return ctx },
		ConnContext: withConn,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(capConns(ln, maxHTTPConns, maxHTTPConnsPerAddr)) }()

	select {
	case err := <-served:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownTimeout)
	defer cancel()
	// Ends long-lived streams (a legacy client's GET stream) so that
	// Shutdown does not wait for them.
	h.streamable.CloseSessions(sctx)
	if err := hs.Shutdown(sctx); err != nil {
		s.log.Warn("http: calls still running at shutdown; closing their connections", "err", err)
		hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	return nil
}

// httpHandler is the whole HTTP face of the server.
type httpHandler struct {
	http.Handler
	streamable *server.StreamableHTTPServer
}

// newHTTPHandler builds the handler chain for the token.
func (s *Server) newHTTPHandler(token string, origins []string) *httpHandler {
	streamable := server.NewStreamableHTTPServer(s.mcp,
		// Every POST gets a session of its own, whatever protocol version
		// the client speaks. mcp-go's default keeps one session per
		// pre-2026 client, whose concurrent calls then share one
		// notification queue: a call's progress could be written to another
		// call's response stream, or dropped with it. With 2026-07-28
		// clients (the Go SDKs) every request is on its own already. The
		// cost: a pre-2026 client's name is known only in its initialize
		// request, not in later calls.
		server.WithStateLess(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return carryClient(carryDelivery(ctx, r), r)
		}),
		server.WithStreamableHTTPLogger(s.log),
	)
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, newHTTPSessions(s.endScope).wrap(cancelHTTP(&flights{}, trackDelivery(s.log, streamable))))
	return &httpHandler{Handler: httpGuard(s.log, token, origins, mux), streamable: streamable}
}

// endScope stops the sandboxes of an HTTP session that ended, as a stdio
// client's end does.
func (s *Server) endScope(scope string) {
	if s.eng == nil {
		return
	}
	res, _ := s.eng.StopAll(sandbox.WithScope(context.Background(), scope), sandbox.StopRequest{})
	if len(res.Stopped) > 0 {
		s.log.Info("http: session ended; stopped its sandboxes", "ids", res.Stopped)
	}
}
