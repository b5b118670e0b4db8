package netproxy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ErrEntry is the class of an allow_domains entry that cannot be used.
var ErrEntry = errors.New("invalid allow_domains entry")

// MaxEntries bounds how many entries one list may hold.
const MaxEntries = 256

// Entry is one allowed destination: a host name ("pypi.org"), every
// subdomain of a name ("*.pythonhosted.org", not the name itself), or an
// IP address with its port; a name without a port allows 80 and 443.
type Entry struct {
	// Name is the canonical host name (for a wildcard, the domain after
	// "*."); empty for an address entry.
	Name string
	// Wildcard makes Name match its subdomains only.
	Wildcard bool
	// Addr is the address of an address entry.
	Addr netip.Addr
	// Port is the one port allowed; 0 means 80 and 443.
	Port int
}

// String is the entry's canonical spelling, which ParseEntry reads back.
func (e Entry) String() string {
	host := e.Name
	switch {
	case e.Addr.IsValid():
		return netip.AddrPortFrom(e.Addr, uint16(e.Port)).String()
	case e.Wildcard:
		host = "*." + e.Name
	}
	if e.Port != 0 {
		return host + ":" + strconv.Itoa(e.Port)
	}
	return host
}

// ParseEntry reads one entry and says in plain words what is wrong with
// one that cannot be used.
func ParseEntry(s string) (Entry, error) {
	bad := func(format string, args ...any) (Entry, error) {
		return Entry{}, fmt.Errorf("%w %q: %s", ErrEntry, clip(s), fmt.Sprintf(format, args...))
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ \t\r\n") {
		return bad("write only the host and, if needed, its port, e.g. \"pypi.org\" or \"api.example.com:8443\"")
	}
	host, port, err := splitEntry(s)
	if err != nil {
		return bad("%v", err)
	}
	var e Entry
	e.Port = port
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.Wildcard = true
		host = rest
	}
	if strings.Contains(host, "*") {
		return bad("a wildcard is written \"*.example.com\" and stands for subdomains only")
	}
	h, err := ParseHost(host)
	if err != nil {
		return bad("%v", err)
	}
	if h.IsAddr() {
		switch {
		case e.Wildcard:
			return bad("a wildcard is for names, not addresses")
		case h.Addr.Zone() != "":
			return bad("an address entry cannot have a zone")
		case port == 0:
			return bad("an address entry needs its port, e.g. \"%s\"", netip.AddrPortFrom(h.Addr, 443))
		}
		e.Addr = h.Addr
		return e, nil
	}
	if e.Wildcard && !strings.Contains(h.Name, ".") {
		return bad("a wildcard needs a domain of at least two labels, e.g. \"*.example.com\"")
	}
	e.Name = h.Name
	return e, nil
}

// splitEntry splits "host", "host:port", "[v6]:port" or "[v6]".
func splitEntry(s string) (string, int, error) {
	if s == "" {
		return "", 0, errors.New("an entry is empty")
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return s, 0, nil
	}
	if !strings.Contains(s, ":") {
		return s, 0, nil
	}
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, errors.New("write an IPv6 address in brackets with its port, e.g. \"[2001:db8::1]:443\"")
	}
	port, err := parsePort(p)
	if err != nil {
		return "", 0, err
	}
	if strings.Contains(s, "[") {
		host = "[" + host + "]"
	}
	return host, port, nil
}

// parsePort reads a decimal port 1 to 65535.
func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || p[0] == '0' || p[0] == '+' {
		return 0, fmt.Errorf("the port %q is not a number from 1 to 65535", clip(p))
	}
	return n, nil
}

// ParseEntries reads a list of entries, naming the first bad one.
func ParseEntries(list []string) ([]Entry, error) {
	if len(list) > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries; at most %d", ErrEntry, len(list), MaxEntries)
	}
	out := make([]Entry, 0, len(list))
	for _, s := range list {
		e, err := ParseEntry(s)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// allowsPort reports whether the entry's port rule admits port.
func (e Entry) allowsPort(port int) bool {
	if e.Port == 0 {
		return port == 80 || port == 443
	}
	return e.Port == port
}

// MatchName reports whether the entry allows the canonical name at port.
func (e Entry) MatchName(name string, port int) bool {
	if e.Name == "" || !e.allowsPort(port) {
		return false
	}
	if e.Wildcard {
		return strings.HasSuffix(name, "."+e.Name)
	}
	return name == e.Name
}

// MatchAddr reports whether the entry names exactly addr and port.
func (e Entry) MatchAddr(addr netip.Addr, port int) bool {
	return e.Addr.IsValid() && e.Port == port && addr.Zone() == "" && e.Addr == addr.Unmap()
}

// Covers reports whether every destination o allows is allowed by e too:
// what decides if an entry asked for is already in a list.
func (e Entry) Covers(o Entry) bool {
	if e.Addr.IsValid() || o.Addr.IsValid() {
		return e.Addr.IsValid() && e.Addr == o.Addr && e.Port == o.Port
	}
	if e.Port != o.Port && !(e.Port == 0 && (o.Port == 80 || o.Port == 443)) {
		return false
	}
	if e.Wildcard {
		return strings.HasSuffix(o.Name, "."+e.Name) || o.Wildcard && o.Name == e.Name
	}
	return !o.Wildcard && o.Name == e.Name
}
