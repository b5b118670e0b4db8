package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// httpGuard refuses, before anything reaches MCP, a request from a web page
// that is not served from this machine (403) and a request without the
// bearer token (401), and caps the request body like the stdio transport
// caps a message. Pages served from this machine get CORS headers, so a
// browser-based client there can connect (with the token).
//
// The Origin check is what mcp-go lacks: it checks Host (against DNS
// rebinding) but not Origin, so a page on any web site could otherwise
// make the user's browser post to the loopback server. Clients that are
// not browsers send no Origin and pass.
func httpGuard(log *slog.Logger, token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins := r.Header.Values("Origin"); len(origins) > 1 || (len(origins) == 1 && !loopbackOrigin(origins[0])) {
			log.Warn("http: refused a request from a foreign origin", "origin", origins, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: this MCP server accepts requests only from this machine; origin "+strings.Join(origins, ", ")+" is not allowed", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			// A page on this machine (the MCP Inspector's web UI, say) may
			// call the server from a browser: allow it by CORS. It still
			// needs the token, which the browser does not have by itself.
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				// A preflight carries no credentials: answer it here.
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		got, ok := bearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-sandbox"`)
			http.Error(w, "Unauthorized: send Authorization: Bearer TOKEN (MCP_SANDBOX_TOKEN, or the http-token file in the mcp-sandbox state directory)", http.StatusUnauthorized)
			return
		}
		// Compare digests so the comparison takes the same time whatever
		// the token's length and content.
		gotSum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(gotSum[:], want[:]) != 1 {
			log.Warn("http: refused a request with a wrong token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-sandbox", error="invalid_token"`)
			http.Error(w, "Unauthorized: wrong bearer token", http.StatusUnauthorized)
			return
		}
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

// loopbackOrigin reports whether origin is a page served from this machine:
// http or https on localhost, 127.0.0.0/8 or [::1], on any port. Any other
// origin, "null" included, is foreign.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || (u.Path != "" && u.Path != "/") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
