package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// publicIndexes are the package indexes an install helper may reach
// without network.install_env naming them (80 and 443).
var publicIndexes = []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}

// installAllowHint ends the helper proxy's 403: only the config's index
// URLs widen what an installer reaches.
const installAllowHint = `the install helper reaches package indexes only; to allow %q, a person names its index URL in network.install_env (e.g. PIP_INDEX_URL or npm_config_registry) in the mcp-sandbox config file`

// installEntries are what an install helper's proxy allows: the public
// indexes and the host:port of every http(s) URL among install_env's
// values (an address there is named exactly, so a loopback or private
// index the person configured is reached, and nothing else on it).
func installEntries(env map[string]string) []netproxy.Entry {
	list := append([]string{}, publicIndexes...)
	for _, v := range env {
		list = append(list, indexHosts(v)...)
	}
	var es []netproxy.Entry
	seen := map[string]bool{}
	for _, s := range list {
		x, err := netproxy.ParseEntry(s)
		if err != nil || seen[x.String()] {
			continue
		}
		seen[x.String()] = true
		es = append(es, x)
	}
	return es
}

// indexHosts are the host:port entries of the http(s) URLs in v (pip's
// lists are separated by spaces; commas are taken too).
func indexHosts(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' }) {
		u, err := url.Parse(f)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		host := u.Hostname()
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.Unmap().String()
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out
}

// helperProxyEnv points an install helper's pip and npm at its proxy.
// Unlike a sandbox's, it has no NO_PROXY: the helper's own loopback holds
// nothing, and an index on the host's loopback is reached through the
// proxy.
var helperProxyEnv = []string{
	"HTTP_PROXY=" + proxyURL, "HTTPS_PROXY=" + proxyURL,
	"http_proxy=" + proxyURL, "https_proxy=" + proxyURL,
	"npm_config_proxy=" + proxyURL, "npm_config_https_proxy=" + proxyURL,
}

// reachedHosts collects the host:port an install's proxy connected to.
type reachedHosts struct {
	mu    sync.Mutex
	hosts map[string]bool
}

func (r *reachedHosts) add(rec netproxy.Record) {
	if !rec.Allowed || rec.Addr == "" || rec.Host == "" { // refused, or allowed but not reached
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hosts == nil {
		r.hosts = map[string]bool{}
	}
	r.hosts[net.JoinHostPort(rec.Host, strconv.Itoa(rec.Port))] = true
}

func (r *reachedHosts) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.hosts))
	for h := range r.hosts {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// errHelperAgent: the helper's only way out is its proxy, which rides
// the command agent; an install never falls back to a network of its own.
var errHelperAgent = errors.New("package installs need the command agent inside the install helper (it carries the helper's only network, a proxy to the package indexes), and it cannot run there")

// helperProxy is the Started hook of sb's install helper: it starts the
// agent inside the helper and serves the helper's proxy on its loopback,
// allowed entries only, recording what was reached.
func (e *Engine) helperProxy(sb *Sandbox, entries []netproxy.Entry, maxConns int, reached *reachedHosts) func(context.Context, string) (func(), error) {
	return func(ctx context.Context, helperID string) (func(), error) {
		at, ok := e.be.(Attacher)
		if !ok {
			return nil, fmt.Errorf("%w: %w (the backend cannot attach)", ErrPolicy, errHelperAgent)
		}
		// A stand-in for the helper: never in e.boxes, so nothing done to
		// it touches sb.
		h := &Sandbox{ID: sb.ID + "-install", ContainerID: helperID, User: helperUser(sb.User)}
		sctx, cancel := context.WithTimeout(ctx, agentStartTimeout)
		c, err := e.startAgent(sctx, at, h)
		cancel()
		if errors.Is(err, agentconn.ErrUnusable) {
			return nil, fmt.Errorf("%w: %w: %v", ErrPolicy, errHelperAgent, err)
		}
		if err != nil {
			return nil, fmt.Errorf("start the install helper's agent: %w", err)
		}
		p := netproxy.New(netproxy.Options{Entries: entries, MaxConns: maxConns, Audit: reached.add, AllowHint: installAllowHint})
		pctx, stop := context.WithCancel(context.Background())
		lctx, cancel := context.WithTimeout(ctx, proxyStartTimeout)
		_, _, err = c.Listen(lctx, ProxyPort, func(conn net.Conn) { p.Serve(pctx, lingerConn{conn}) })
		cancel()
		if err != nil {
			stop()
			c.Close()
			return nil, fmt.Errorf("the install helper's proxy: %w", err)
		}
		return func() { stop(); c.Close() }, nil
	}
}
