package netglue

import (
	"io"
	"net"
	"strconv"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// ProxyPort is the port of an allowlist sandbox's proxy on its own
// loopback (127.0.0.1:3128, the usual port of an HTTP proxy): the command
// agent listens there and carries each connection to the server, which
// serves it with the sandbox's netproxy.Proxy.
const ProxyPort = 3128

// proxyURL is what the proxy variables name.
var proxyURL = "http://127.0.0.1:" + strconv.Itoa(ProxyPort)

// ProxyEnv returns the environment of an allowlist sandbox's container, so
// every process in it (run_code, sandbox_exec, the resident runners, a
// person's docker exec) finds the proxy.
func ProxyEnv() []string {
	return []string{
		"HTTP_PROXY=" + proxyURL, "HTTPS_PROXY=" + proxyURL,
		"http_proxy=" + proxyURL, "https_proxy=" + proxyURL,
		"ALL_PROXY=" + proxyURL, "all_proxy=" + proxyURL,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
}

// EntryStrings returns es as the config writes them.
func EntryStrings(es []netproxy.Entry) []string {
	out := make([]string, len(es))
	for i, x := range es {
		out[i] = x.String()
	}
	return out
}

// lingerTimeout bounds how long a closed proxy connection waits for the
// program inside to close its side (Linger).
const lingerTimeout = 2 * time.Second

// Linger wraps a connection carried from inside a sandbox so it closes as
// a TCP socket with nothing left to read is closed: its end is sent (eof)
// after everything written, and the program's end is awaited briefly, so
// the answer is delivered rather than cut by a reset (a stream closed
// before the program finished sending is reset, discarding what the agent
// had not yet written).
func Linger(c net.Conn) net.Conn { return lingerConn{c} }

type lingerConn struct{ net.Conn }

func (l lingerConn) CloseWrite() error {
	if cw, ok := l.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (l lingerConn) Close() error {
	if l.CloseWrite() == nil {
		_ = l.SetReadDeadline(time.Now().Add(lingerTimeout))
		_, _ = io.Copy(io.Discard, io.LimitReader(l.Conn, 64<<10))
	}
	return l.Conn.Close()
}
