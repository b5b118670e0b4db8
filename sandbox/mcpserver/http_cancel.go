package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// httpSessionIDKey carries a request's session id (a client before
// protocol version 2026-07-28) from httpSessions to cancelHTTP.
type httpSessionIDKey struct{}

// cancelHTTP gives over HTTP what ServeStdio does with flights: a
// notifications/cancelled of a session stops the call of that session it
// names, and the call's response is not written (mcp-go writes nothing
// for a request whose context ended). The notification is answered here
// and never reaches mcp-go, which would cancel by id alone in every
// session (all of them have mcp-go's empty stateless id), so a client
// could stop another's call. Without a session (protocol 2026-07-28) a
// client cancels by closing its response stream, and a
// notifications/cancelled cannot be told to be its own: it is ignored.
func cancelHTTP(f *flights, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		if err != nil {
			next.ServeHTTP(w, r) // mcp-go answers the short body
			return
		}
		sid, _ := r.Context().Value(httpSessionIDKey{}).(string)
		if f.cancelFrom(sid, body) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		var id any
		if sid == "" || json.Unmarshal(body, &msg) != nil || msg.Method == "" || json.Unmarshal(msg.ID, &id) != nil || id == nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx, fl := f.begin(r.Context(), sid, id)
		defer f.end(fl)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withSessionID is r carrying its session id for cancelHTTP.
func withSessionID(r *http.Request, id string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), httpSessionIDKey{}, id))
}
