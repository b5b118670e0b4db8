package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// ErrRemoteAddr is the refusal of a --http address that is not loopback
// when --allow-remote was not given.
var ErrRemoteAddr = errors.New("not a loopback address")

// minTokenLen is the length below which a token from MCP_SANDBOX_TOKEN is
// accepted with a warning (a generated token has 64 characters).
const minTokenLen = 32

// CheckHTTPAddr checks a --http address before anything starts: serve
// calls it right after parsing its flags (a refusal is a usage error, exit
// code 2), and serveHTTP again so that it is safe on its own. It reports
// whether the address is reachable from other machines (then allowed, with
// a warning); without --allow-remote such an address is refused with an
// error wrapping ErrRemoteAddr.
func CheckHTTPAddr(addr string, allowRemote bool) (remote bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return false, fmt.Errorf("--http %s: want HOST:PORT, e.g. 127.0.0.1:8765 (port 0 picks a free one): %w", addr, err)
	}
	if isLoopbackHost(host) {
		return false, nil
	}
	if !allowRemote {
		return true, fmt.Errorf("--http %s: %w: the server runs code for whoever has the token, so it listens only on 127.0.0.1, [::1] or localhost; use e.g. 127.0.0.1:%s, or add --allow-remote if you really mean to accept other machines",
			addr, ErrRemoteAddr, port)
	}
	return true, nil
}

// isLoopbackHost: localhost or a loopback IP. Other names are not resolved
// (what they resolve to can change); an empty host means every interface.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// httpToken returns the bearer token: MCP_SANDBOX_TOKEN when set, else the
// one stored (mode 0600) in the state dir, generated on first use. The
// second result says where it came from, for the log (never the token).
func httpToken(getenv func(string) string, log *slog.Logger, st *state.Store) (string, string, error) {
	if t := strings.TrimSpace(getenv("MCP_SANDBOX_TOKEN")); t != "" {
		if len(t) < minTokenLen {
			log.Warn("MCP_SANDBOX_TOKEN is short; anyone who guesses it can run code here", "length", len(t), "want_at_least", minTokenLen)
		}
		return t, "MCP_SANDBOX_TOKEN", nil
	}
	t, err := st.Token()
	if err != nil {
		return "", "", fmt.Errorf("http token: %w", err)
	}
	return t, "stored in " + st.Dir(), nil
}

// listenHTTP checks o.HTTPAddr and listens on it. Run calls it before it
// starts anything else, so that a taken port is the first and only thing
// a person reads.
func listenHTTP(o Options) (ln net.Listener, remote bool, err error) {
	addr := o.HTTPAddr
	if remote, err = CheckHTTPAddr(addr, o.AllowRemote); err != nil {
		return nil, false, err
	}
	ln, err = net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, false, fmt.Errorf("--http %s: the port is taken by another program%s; choose another port, or stop that program", addr, trayHint(o, addr))
	}
	if err != nil {
		return nil, false, fmt.Errorf("--http %s: %w", addr, err)
	}
	return ln, remote, nil
}

// trayHint names the tray's HTTP server when the config gives it addr's
// port.
func trayHint(o Options, addr string) string {
	if o.Config == nil {
		return ""
	}
	cfg := o.Config.Current()
	_, port, _ := net.SplitHostPort(addr)
	if cfg.Tray.HTTPPort == 0 || strconv.Itoa(cfg.Tray.HTTPPort) != port {
		return ""
	}
	return fmt.Sprintf(" (the tray's HTTP server uses it: [tray] http_port = %s in %s, already serving MCP there)", port, cfg.Source)
}

// serveHTTP serves streamable HTTP on ln until ctx is done (SIGTERM,
// SIGINT). It logs the endpoint's URL (with the real port when the address
// asked for port 0), never the token.
func serveHTTP(ctx context.Context, log *slog.Logger, srv *mcpserver.Server, o Options, ln net.Listener, remote bool) error {
	token, source, err := httpToken(o.getenv, log, o.State)
	if err != nil {
		ln.Close()
		return err
	}
	if remote {
		log.Warn("--allow-remote: listening beyond this machine; anyone who can reach this address and has the token can run code in sandboxes on this computer, and the traffic (token included) is not encrypted", "addr", ln.Addr().String())
	}
	log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+mcpserver.HTTPPath, "token", source)
	// Read when serving starts: a changed list applies at the next start.
	return srv.ServeStreamableHTTP(ctx, ln, mcpserver.HTTPOptions{Token: token, AllowedOrigins: o.Config.Current().HTTP.AllowedOrigins})
}
