package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// maxAddrs bounds the addresses one lookup may yield that are tried.
const maxAddrs = 16

// maxDecided bounds the answers to Ask a Proxy remembers.
const maxDecided = 4096

// refusal is why a connection was not made: a policy refusal (403, counted
// among the refused hosts) or a failure to reach an allowed host (502/504).
type refusal struct {
	status int
	reason string
	policy bool // a refusal by the rules, not a failure
	entry  string
}

// notAllowed is a policy refusal of host:port with a suggested entry.
func notAllowed(h Host, port int, format string, args ...any) *refusal {
	return &refusal{status: 403, reason: fmt.Sprintf(format, args...), policy: true, entry: suggestEntry(h, port)}
}

// suggestEntry is the entry that would allow h at port.
func suggestEntry(h Host, port int) string {
	if h.IsAddr() {
		return netip.AddrPortFrom(h.Addr.WithZone(""), uint16(port)).String()
	}
	if port == 80 || port == 443 {
		return h.Name
	}
	return h.Name + ":" + strconv.Itoa(port)
}

// admit applies the entries, then a person's answer, to a host.
func (p *Proxy) admit(ctx context.Context, h Host, port int) *refusal {
	entries := p.entryList()
	if h.IsAddr() {
		if h.Addr.Zone() != "" {
			return &refusal{status: 403, reason: "an address with a zone (an interface of the host) is never reached", policy: true}
		}
		for _, e := range entries {
			if e.MatchAddr(h.Addr, port) {
				return nil
			}
		}
		return notAllowed(h, port, "an IP address is reached only through an entry naming it and its port exactly")
	}
	for _, e := range entries {
		if e.MatchName(h.Name, port) {
			return nil
		}
	}
	return p.ask(ctx, h, port)
}

// askCall is one Ask in flight, shared by the connections that need it.
type askCall struct {
	done chan struct{}
	d    Decision
	err  error
}

// ask consults Options.Ask once per host:port at a time and remembers
// the answer.
func (p *Proxy) ask(ctx context.Context, h Host, port int) *refusal {
	key := net.JoinHostPort(h.Name, strconv.Itoa(port))
	p.mu.Lock()
	if d, ok := p.decided[key]; ok {
		p.mu.Unlock()
		return answerRefusal(h, port, d, nil)
	}
	if p.opts.Ask == nil {
		p.mu.Unlock()
		return notAllowed(h, port, "not on this sandbox's allow list")
	}
	c, waiting := p.asking[key]
	if !waiting {
		c = &askCall{done: make(chan struct{})}
		p.asking[key] = c
	}
	p.mu.Unlock()
	if !waiting {
		d, err := p.askIfGrantable(ctx, h, port)
		p.mu.Lock()
		delete(p.asking, key)
		if err == nil && len(p.decided) < maxDecided {
			p.decided[key] = d
		}
		c.d, c.err = d, err
		close(c.done)
		p.mu.Unlock()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return notAllowed(h, port, "not on this sandbox's allow list, and no answer came before the connection ended")
	}
	return answerRefusal(h, port, c.d, c.err)
}

// askIfGrantable asks about h:port unless a yes could not open it: a name
// whose every address is restricted is refused without a question.
func (p *Proxy) askIfGrantable(ctx context.Context, h Host, port int) (Decision, error) {
	lctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
	_, r := p.resolve(lctx, h, port)
	cancel()
	if r != nil && r.policy {
		return Deny, fmt.Errorf("not asked: %s", r.reason)
	}
	return p.opts.Ask(ctx, h.Name, port)
}

func answerRefusal(h Host, port int, d Decision, err error) *refusal {
	switch {
	case err != nil:
		return notAllowed(h, port, "not on this sandbox's allow list, and no person allowed it (%v)", err)
	case d == Declined:
		return notAllowed(h, port, "not on this sandbox's allow list, and the person asked declined it")
	case d != Allow:
		return notAllowed(h, port, "not on this sandbox's allow list, and no person allowed it (refused, not answered in time, or nobody could be asked)")
	}
	return nil
}

// resolve looks a name up once and keeps the addresses the rules allow;
// an address literal is its own answer (admit has checked it).
func (p *Proxy) resolve(ctx context.Context, h Host, port int) ([]netip.AddrPort, *refusal) {
	if h.IsAddr() {
		return []netip.AddrPort{netip.AddrPortFrom(h.Addr.Unmap(), uint16(port))}, nil
	}
	addrs, err := p.opts.Resolver.LookupNetIP(ctx, "ip", h.Name)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, &refusal{status: 502, reason: "the name does not exist (DNS)"}
		}
		return nil, &refusal{status: 502, reason: fmt.Sprintf("looking the name up failed: %v", err)}
	}
	entries := p.entryList()
	var out []netip.AddrPort
	var why string
	var skipped netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if r := Restricted(a); r != "" && !matchesAddr(entries, a, port) {
			why, skipped = fmt.Sprintf("it resolves to %s, %s", a, r), a
			continue
		}
		ap := netip.AddrPortFrom(a, uint16(port))
		if len(out) < maxAddrs && !containsAddr(out, ap) {
			out = append(out, ap)
		}
	}
	if len(out) == 0 {
		if why == "" {
			return nil, &refusal{status: 502, reason: "the name has no address"}
		}
		// The entry that would allow it names the address, not the name.
		return nil, notAllowed(Host{Addr: skipped}, port, "%s, which only an entry naming that address and port allows", why)
	}
	return out, nil
}

func matchesAddr(entries []Entry, a netip.Addr, port int) bool {
	for _, e := range entries {
		if e.MatchAddr(a, port) {
			return true
		}
	}
	return false
}

func containsAddr(list []netip.AddrPort, a netip.AddrPort) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

// dial connects to the first of the checked addresses that answers. The
// address is a literal: the Dialer does no lookup of its own.
func (p *Proxy) dial(ctx context.Context, addrs []netip.AddrPort) (net.Conn, netip.AddrPort, *refusal) {
	var last error
	for _, a := range addrs {
		conn, err := p.opts.Dialer.DialContext(ctx, "tcp", a.String())
		if err == nil {
			return conn, a, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, netip.AddrPort{}, &refusal{status: 504, reason: fmt.Sprintf("connecting timed out after %s", p.opts.DialTimeout)}
	}
	return nil, netip.AddrPort{}, &refusal{status: 502, reason: fmt.Sprintf("connecting failed: %v", last)}
}

// connect admits, resolves and dials host:port.
func (p *Proxy) connect(ctx context.Context, h Host, port int) (net.Conn, netip.AddrPort, *refusal) {
	if r := p.admit(ctx, h, port); r != nil {
		return nil, netip.AddrPort{}, r
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
	defer cancel()
	addrs, r := p.resolve(ctx, h, port)
	if r != nil {
		if ctx.Err() != nil && !r.policy {
			r = &refusal{status: 504, reason: fmt.Sprintf("looking the name up timed out after %s", p.opts.DialTimeout)}
		}
		return nil, netip.AddrPort{}, r
	}
	return p.dial(ctx, addrs)
}
