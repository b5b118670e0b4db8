package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// httpGuard refuses, before anything reaches MCP, a request from a web page
// whose origin is not in allowed (403), a request without the bearer
// token (401), both from the headers alone and closing the connection
// (http_limits.go), and times and caps the request body like the stdio
// transport caps a message. Only the allowed origins get CORS headers.
//
// The Origin check is what mcp-go lacks: it checks Host (against DNS
// rebinding) but not Origin. No origin is trusted by default, loopback
// pages included: a page a sandbox serves (a preview, opened in the
// person's browser at http://127.0.0.1:N/) is such a page. Clients that
// are not browsers send no Origin and pass.
func httpGuard(log *slog.Logger, token string, allowed []string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	trusted := map[string]bool{}
	for _, o := range allowed {
		if c := config.CanonicalOrigin(o); c != "" {
			trusted[c] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origins := r.Header.Values("Origin")
		if len(origins) > 1 || (len(origins) == 1 && !trusted[config.CanonicalOrigin(origins[0])]) {
			log.Warn("http: refused a request from a browser origin not in http.allowed_origins", "origin", origins, "remote", r.RemoteAddr)
			refuse(w, "Forbidden: this MCP server serves no web page unless a person lists its origin in http.allowed_origins in the mcp-sandbox config file; origin "+strings.Join(origins, ", ")+" is not listed", http.StatusForbidden)
			return
		}
		if len(origins) == 1 {
			corsHeaders(w.Header(), origins[0])
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				// A preflight carries no credentials: answer it here.
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		got, ok := bearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-sandbox"`)
			refuse(w, "Unauthorized: send Authorization: Bearer TOKEN (MCP_SANDBOX_TOKEN, or the http-token file in the mcp-sandbox state directory)", http.StatusUnauthorized)
			return
		}
		// Compare digests so the comparison takes the same time whatever
		// the token's length and content.
		gotSum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(gotSum[:], want[:]) != 1 {
			log.Warn("http: refused a request with a wrong token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-sandbox", error="invalid_token"`)
			refuse(w, "Unauthorized: wrong bearer token", http.StatusUnauthorized)
			return
		}
		trustConn(r)
		timeBody(w, r)
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxMessageBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken returns the token of an "Authorization: Bearer TOKEN" header
// (the scheme is case-insensitive, RFC 9110 section 11.1).
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// corsHeaders let an allowed page (the MCP Inspector's web UI, say) call
// the server from a browser; it still needs the token, which the browser
// does not have by itself.
func corsHeaders(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
}
