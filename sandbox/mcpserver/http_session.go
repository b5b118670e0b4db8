package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// Over HTTP every POST gets a session of its own inside mcp-go (see
// newHTTPHandler), so that concurrent calls' progress cannot be mixed
// between response streams. The session id a client before protocol
// version 2026-07-28 sees is therefore this layer's, not mcp-go's:
// httpSessions answers initialize with an id, remembers it (with the
// client's name, which such a client gives only in initialize, for the
// audit log, `ps` and the tray) and, as the MCP specification asks,
// answers 404 to a request that carries an id it did not issue, one that
// was deleted (HTTP DELETE) or one that expired, so that the client starts
// a new session. The header is taken off before mcp-go sees the request,
// so mcp-go's handling stays per-request. Requests of protocol version
// 2026-07-28, which has no sessions, pass untouched (a client of that
// version names itself in every request; see clientName).
//
// Each session is a client of its own (sandbox.WithScope): it sees and
// acts on the sandboxes it made only, and its end (DELETE, expiry or
// eviction) stops them, as a stdio client's end does. Requests without a
// session (2026-07-28, or an older client that never initialized) are
// one more client, anonymousScope, apart from every session.

// Bounds of the remembered sessions.
const (
	// maxHTTPSessions bounds the sessions remembered; when full, the one
	// used least recently is forgotten.
	maxHTTPSessions = 1024
	// httpSessionIdle is how long a session lives unused.
	httpSessionIdle = 24 * time.Hour
)

// maxPeekBytes is the largest body read to find an initialize request.
const maxPeekBytes = 64 << 10

// anonymousScope is the client scope of requests without a session.
const anonymousScope = "http"

// httpSession is what is remembered of one issued session id.
type httpSession struct {
	name     string // the client's name from initialize, may be ""
	scope    string // its client scope, not secret (the id is)
	lastUsed time.Time
}

// httpSessions are the session ids issued to pre-2026-07-28 clients.
type httpSessions struct {
	mu  sync.Mutex
	ids map[string]*httpSession
	now func() time.Time
	// ended is told the scope of each session that ends, outside mu.
	ended func(scope string)
}

type (
	httpClientKey struct{}
	httpScopeKey  struct{}
)

func newHTTPSessions(ended func(scope string)) *httpSessions {
	return &httpSessions{ids: map[string]*httpSession{}, now: time.Now, ended: ended}
}

func newScope() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "http-" + hex.EncodeToString(b[:])
}

// endAll tells ended of the sessions gone.
func (c *httpSessions) endAll(gone []string) {
	for _, scope := range gone {
		if c.ended != nil {
			c.ended(scope)
		}
	}
}

// issue makes a new session id for a client called name, and returns it
// with the session's scope.
func (c *httpSessions) issue(name string) (id, scope string) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id, scope = "mcp-sandbox-"+hex.EncodeToString(b[:]), newScope()
	var gone []string
	defer func() { c.endAll(gone) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.ids) >= maxHTTPSessions {
		gone = c.evictLocked(now)
	}
	c.ids[id] = &httpSession{name: name, scope: scope, lastUsed: now}
	return id, scope
}

// evictLocked forgets the expired sessions, or, when none has expired,
// the one used least recently, and returns their scopes.
func (c *httpSessions) evictLocked(now time.Time) (gone []string) {
	var oldest string
	for id, s := range c.ids {
		if now.Sub(s.lastUsed) > httpSessionIdle {
			gone = append(gone, s.scope)
			delete(c.ids, id)
			continue
		}
		if oldest == "" || s.lastUsed.Before(c.ids[oldest].lastUsed) {
			oldest = id
		}
	}
	if len(c.ids) >= maxHTTPSessions && oldest != "" {
		gone = append(gone, c.ids[oldest].scope)
		delete(c.ids, oldest)
	}
	return gone
}

// use returns the session of id and marks it used; ok is false for an id
// never issued, deleted, evicted or expired.
func (c *httpSessions) use(id string) (s httpSession, ok bool) {
	var gone []string
	defer func() { c.endAll(gone) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.ids[id]
	if !ok {
		return httpSession{}, false
	}
	now := c.now()
	if now.Sub(p.lastUsed) > httpSessionIdle {
		gone = append(gone, p.scope)
		delete(c.ids, id)
		return httpSession{}, false
	}
	p.lastUsed = now
	return *p, true
}

// end forgets id and reports whether it was a live session.
func (c *httpSessions) end(id string) bool {
	s, ok := c.use(id)
	if !ok {
		return false
	}
	c.mu.Lock()
	delete(c.ids, id)
	c.mu.Unlock()
	c.endAll([]string{s.scope})
	return true
}

// wrap is the middleware.
func (c *httpSessions) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			next.ServeHTTP(w, r) // no sessions at 2026-07-28; mcp-go checks the rest
			return               // (the anonymous scope: see carryClient)
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			c.serveWithoutID(w, r, next)
			return
		}
		r.Header.Del(server.HeaderKeySessionID)
		if r.Method == http.MethodDelete {
			if !c.end(id) {
				http.Error(w, "Session not found", http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		s, ok := c.use(id)
		if !ok {
			http.Error(w, "Session not found: initialize a new session", http.StatusNotFound)
			return
		}
		r = r.WithContext(withClient(r.Context(), s.name, s.scope))
		next.ServeHTTP(w, withSessionID(r, id))
	})
}

// serveWithoutID serves a request that carries no session id: an
// initialize gets one; anything else is served as before (stateless).
func (c *httpSessions) serveWithoutID(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r)
		return
	}
	peek, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes+1))
	// The body is given back whole, whatever was read of it.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(peek), r.Body), r.Body}
	if err == nil && len(peek) <= maxPeekBytes {
		if name, ok := initializeName(peek); ok {
			id, scope := c.issue(name)
			w.Header().Set(server.HeaderKeySessionID, id)
			r = r.WithContext(withClient(r.Context(), name, scope))
		}
	}
	next.ServeHTTP(w, r)
}

// initializeName reports whether body is an initialize request, and the
// client's name in it.
func initializeName(body []byte) (string, bool) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ClientInfo struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" {
		return "", false
	}
	return msg.Params.ClientInfo.Name, true
}

// withClient is ctx of a request of the session's client.
func withClient(ctx context.Context, name, scope string) context.Context {
	if name != "" {
		ctx = context.WithValue(ctx, httpClientKey{}, name)
	}
	return context.WithValue(ctx, httpScopeKey{}, scope)
}

// httpTransportKey marks a request's context as one that came over HTTP.
type httpTransportKey struct{}

// overHTTP reports whether ctx is an HTTP request's: its session lasts
// only as long as the request, so the Asker never asks through it.
func overHTTP(ctx context.Context) bool {
	v, _ := ctx.Value(httpTransportKey{}).(bool)
	return v
}

// carryClient is part of mcp-go's HTTP context function: it hands the
// request's client name and scope on to the context tool handlers get.
func carryClient(ctx context.Context, r *http.Request) context.Context {
	ctx = context.WithValue(ctx, httpTransportKey{}, true)
	if name, ok := r.Context().Value(httpClientKey{}).(string); ok {
		ctx = context.WithValue(ctx, httpClientKey{}, name)
	}
	scope, ok := r.Context().Value(httpScopeKey{}).(string)
	if !ok {
		scope = anonymousScope
	}
	return sandbox.WithScope(ctx, scope)
}
