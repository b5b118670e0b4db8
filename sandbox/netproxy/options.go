package netproxy

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// Resolver looks a name up once; *net.Resolver (net.DefaultResolver) is
// one. Tests inject their own answers.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens the connection to a checked address ("203.0.113.7:443",
// never a name); *net.Dialer is one.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Decision is the answer to an Ask.
type Decision int

const (
	// Deny refuses the host:port, and keeps refusing it without asking
	// again for as long as the Proxy lives.
	Deny Decision = iota
	// Allow allows the host:port for as long as the Proxy lives.
	Allow
	// Declined is Deny because a person said no: the 403 says so.
	Declined
)

// AskFunc asks whether a sandbox may reach a host name that no entry
// allows (host is canonical). The connection that needs the answer waits
// for it; others go on. Concurrent asks for one host:port share one call.
// An error refuses this connection and asks again next time. Ask bounds
// its own wait (the person-asking step: 60 s); the connection waits as
// long as it does, or until its context ends.
type AskFunc func(ctx context.Context, host string, port int) (Decision, error)

// Options configure a Proxy; zero values mean the defaults below.
type Options struct {
	// Entries are the destinations allowed without asking.
	Entries []Entry
	// Ask is consulted for names no entry allows; nil refuses them.
	Ask AskFunc
	// Audit receives one Record per CONNECT tunnel, per plain request and
	// per connection refused before a request was read. It is called on
	// the connection's goroutine and must not block for long.
	Audit func(Record)
	// Resolver defaults to net.DefaultResolver; Dialer to a net.Dialer.
	Resolver Resolver
	Dialer   Dialer
	// MaxConns bounds the connections open at once (default 64); one
	// more is answered 503 and closed.
	MaxConns int
	// MaxHeaderBytes bounds a request's head (default 32 KiB): beyond, 431.
	MaxHeaderBytes int
	// HeadTimeout is how long the first request's head may take to
	// arrive (default 10 s): a slow client gets 408 and is closed.
	// IdleTimeout is the same for each later request on a keep-alive
	// connection (default 30 s); one that sent nothing is closed quietly.
	HeadTimeout time.Duration
	IdleTimeout time.Duration
	// DialTimeout bounds the lookup and the dial together (default 10 s).
	DialTimeout time.Duration
	// WriteTimeout bounds writing the proxy's own answers (403, 408, …)
	// to a client that does not read (default 5 s): it is then closed.
	WriteTimeout time.Duration
	// AllowHint says how a person allows a refused host; it ends the 403
	// body. It is a format with one %q verb, given the entry that would
	// allow the host. The default (DefaultAllowHint) names
	// network.allow_domains and sandbox_create's allow_domains.
	AllowHint string
	// MaxRefusedHosts bounds the refused hosts Stats keeps (default 32).
	MaxRefusedHosts int
}

// Defaults.
const (
	DefaultMaxConns       = 64
	DefaultMaxHeaderBytes = 32 << 10
	DefaultHeadTimeout    = 10 * time.Second
	DefaultIdleTimeout    = 30 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultWriteTimeout   = 5 * time.Second
	defaultRefusedHosts   = 32
)

// DefaultAllowHint is the end of a 403's body; %q is the entry to add.
const DefaultAllowHint = `to allow it, a person adds %q to network.allow_domains in the mcp-sandbox config file; then sandbox_create's allow_domains may name it (asking for it there alone does not grant it)`

func (o Options) withDefaults() Options {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.MaxConns, DefaultMaxConns)
	set(&o.MaxHeaderBytes, DefaultMaxHeaderBytes)
	set(&o.MaxRefusedHosts, defaultRefusedHosts)
	setD(&o.HeadTimeout, DefaultHeadTimeout)
	setD(&o.IdleTimeout, DefaultIdleTimeout)
	setD(&o.DialTimeout, DefaultDialTimeout)
	setD(&o.WriteTimeout, DefaultWriteTimeout)
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Dialer == nil {
		o.Dialer = &net.Dialer{}
	}
	if o.AllowHint == "" {
		o.AllowHint = DefaultAllowHint
	}
	return o
}
