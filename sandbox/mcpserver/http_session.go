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

// httpSession is what is remembered of one issued session id.
type httpSession struct {
	name     string // the client's name from initialize, may be ""
	lastUsed time.Time
}

// httpSessions are the session ids issued to pre-2026-07-28 clients.
type httpSessions struct {
	mu  sync.Mutex
	ids map[string]*httpSession
	now func() time.Time
}

type httpClientKey struct{}

func newHTTPSessions() *httpSessions {
	return &httpSessions{ids: map[string]*httpSession{}, now: time.Now}
}

// issue makes a new session id for a client called name.
func (c *httpSessions) issue(name string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "mcp-sandbox-" + hex.EncodeToString(b[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.ids) >= maxHTTPSessions {
		c.evictLocked(now)
	}
	c.ids[id] = &httpSession{name: name, lastUsed: now}
	return id
}

// evictLocked forgets the expired sessions, or, when none has expired,
// the one used least recently.
func (c *httpSessions) evictLocked(now time.Time) {
	var oldest string
	for id, s := range c.ids {
		if now.Sub(s.lastUsed) > httpSessionIdle {
			delete(c.ids, id)
			continue
		}
		if oldest == "" || s.lastUsed.Before(c.ids[oldest].lastUsed) {
			oldest = id
		}
	}
	if len(c.ids) >= maxHTTPSessions && oldest != "" {
		delete(c.ids, oldest)
	}
}

// use returns the session of id and marks it used; ok is false for an id
// never issued, deleted, evicted or expired.
func (c *httpSessions) use(id string) (s httpSession, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.ids[id]
	if !ok {
		return httpSession{}, false
	}
	now := c.now()
	if now.Sub(p.lastUsed) > httpSessionIdle {
		delete(c.ids, id)
		return httpSession{}, false
	}
	p.lastUsed = now
	return *p, true
}

// end forgets id and reports whether it was a live session.
func (c *httpSessions) end(id string) bool {
	_, ok := c.use(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.ids, id)
	return ok
}

// wrap is the middleware.
func (c *httpSessions) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			next.ServeHTTP(w, r) // no sessions at 2026-07-28; mcp-go checks the rest
			return
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
		if s.name != "" {
			r = r.WithContext(context.WithValue(r.Context(), httpClientKey{}, s.name))
		}
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
			w.Header().Set(server.HeaderKeySessionID, c.issue(name))
			if name != "" {
				r = r.WithContext(context.WithValue(r.Context(), httpClientKey{}, name))
			}
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

// carryClient is part of mcp-go's HTTP context function: it hands the
// request's client name on to the context tool handlers get.
// httpTransportKey marks a request's context as one that came over HTTP.
type httpTransportKey struct{}

// overHTTP reports whether ctx is an HTTP request's: its session lasts
// only as long as the request, so the Asker never asks through it.
func overHTTP(ctx context.Context) bool {
	v, _ := ctx.Value(httpTransportKey{}).(bool)
	return v
}

func carryClient(ctx context.Context, r *http.Request) context.Context {
	ctx = context.WithValue(ctx, httpTransportKey{}, true)
	if name, ok := r.Context().Value(httpClientKey{}).(string); ok {
		return context.WithValue(ctx, httpClientKey{}, name)
	}
	return ctx
}
