package supervisor

import (
	"fmt"
	"net"
	"strconv"
)

// HTTPServer is the tray's own streamable-HTTP server: what a client
// that connects by URL needs to know.
type HTTPServer struct {
	// Addr is the loopback address it listens on.
	Addr string
	// URL is the MCP endpoint to give a client.
	URL string
	// Token is the bearer token the client sends.
	Token string
}

// NewHTTPServer describes the server on 127.0.0.1:port.
func NewHTTPServer(port int, token string) HTTPServer {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// The path is sandbox/mcpserver's HTTPPath (a test checks), written
	// out so the tray does not link the server's packages for a constant.
	return HTTPServer{Addr: addr, URL: fmt.Sprintf("http://%s/mcp", addr), Token: token}
}

// Options returns the supervisor options that run it from the server
// binary at path: `path serve --http ADDR`, with the token in
// MCP_SANDBOX_TOKEN on top of env.
func (h HTTPServer) Options(path string, env []string) Options {
	e := append(append([]string{}, env...), "MCP_SANDBOX_TOKEN="+h.Token)
	return Options{Command: path, Args: []string{"serve", "--http", h.Addr}, Env: e}
}
