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

	"github.com/mark3labs/mcp-go/server"
)

// Over HTTP every POST gets a session of its own (see newHTTPHandler), so
// a pre-2026 client's name, which it gives only in initialize, would be
// lost for its later calls, and the audit log, `ps` and the tray could not
// say which client made a sandbox. httpClients answers initialize with a
// session id of its own, remembers the name under it, and puts it in the
// context of every later request that carries the id. The header is taken
// off before mcp-go sees the request, so mcp-go's handling stays
// per-request as before. (A 2026-07-28 client names itself in every
// request; see clientName.)

// maxHTTPClients bounds the remembered names; the oldest go first.
const maxHTTPClients = 1024

// maxPeekBytes is the largest body read to find an initialize request.
const maxPeekBytes = 64 << 10

type httpClients struct {
	mu    sync.Mutex
	names map[string]string
	order []string
}

type httpClientKey struct{}

func newHTTPClients() *httpClients { return &httpClients{names: map[string]string{}} }

func (c *httpClients) remember(name string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "mcp-sandbox-" + hex.EncodeToString(b[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.order) >= maxHTTPClients {
		delete(c.names, c.order[0])
		c.order = c.order[1:]
	}
	c.names[id] = name
	c.order = append(c.order, id)
	return id
}

func (c *httpClients) lookup(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[id]
}

func (c *httpClients) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.names, id)
}

// wrap is the middleware.
func (c *httpClients) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(server.HeaderKeySessionID)
		if id != "" {
			r.Header.Del(server.HeaderKeySessionID)
			if name := c.lookup(id); name != "" {
				r = r.WithContext(context.WithValue(r.Context(), httpClientKey{}, name))
			}
			if r.Method == http.MethodDelete {
				c.forget(id)
			}
		} else if r.Method == http.MethodPost && r.ContentLength > 0 && r.ContentLength <= maxPeekBytes {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes))
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
			if err == nil {
				if name := initializeName(body); name != "" {
					w.Header().Set(server.HeaderKeySessionID, c.remember(name))
					r = r.WithContext(context.WithValue(r.Context(), httpClientKey{}, name))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// initializeName returns the client's name from an initialize request.
func initializeName(body []byte) string {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ClientInfo struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" {
		return ""
	}
	return msg.Params.ClientInfo.Name
}

// carryClient is part of mcp-go's HTTP context function: it hands the
// request's client name on to the context tool handlers get.
func carryClient(ctx context.Context, r *http.Request) context.Context {
	if name, ok := r.Context().Value(httpClientKey{}).(string); ok {
		return context.WithValue(ctx, httpClientKey{}, name)
	}
	return ctx
}
