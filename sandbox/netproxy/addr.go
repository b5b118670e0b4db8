package netproxy

import (
	"net/netip"
)

// addrClass is a range of addresses a sandbox may not reach unless an
// entry names the address and port exactly.
type addrClass struct {
	prefix netip.Prefix
	what   string
}

// metadata are cloud instance metadata and control-plane addresses: AWS,
// GCP, Azure, OpenStack (169.254.169.254, fd00:ec2::254), AWS ECS task
// metadata (169.254.170.2), Alibaba (100.100.100.200), Oracle
// (192.0.0.192) and Azure's wire server (168.63.129.16, a public address).
var metadata = []string{
	"169.254.169.254/32", "169.254.170.2/32", "fd00:ec2::254/128", "100.100.100.200/32",
	"192.0.0.192/32", "168.63.129.16/32",
}

// classes are checked in order; the first that contains an address names
// why it is refused. IPv6 forms that carry an IPv4 address (mapped,
// compatible, NAT64, 6to4) are judged by that address too (embedded).
var classes = func() []addrClass {
	var out []addrClass
	add := func(what string, prefixes ...string) {
		for _, p := range prefixes {
			out = append(out, addrClass{netip.MustParsePrefix(p), what})
		}
	}
	add("a cloud metadata address", metadata...)
	add("an unspecified address", "0.0.0.0/8", "::/128")
	add("a loopback address", "127.0.0.0/8", "::1/128")
	add("a private address", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
	add("a link-local address", "169.254.0.0/16", "fe80::/10")
	add("a shared (CGNAT) address", "100.64.0.0/10")
	add("a unique-local address", "fc00::/7", "fec0::/10")
	add("a multicast address", "224.0.0.0/4", "ff00::/8")
	add("a reserved address", "240.0.0.0/4", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "::/96", "100::/64", "2001::/32", "2001:db8::/32")
	return out
}()

// Restricted says why addr may only be reached when an entry names it
// exactly ("a loopback address"), or "" for an ordinary public address.
// An address with a zone is always restricted.
func Restricted(addr netip.Addr) string {
	if addr.Zone() != "" {
		return "an address with a zone"
	}
	addr = addr.Unmap()
	for _, c := range classes {
		if c.prefix.Contains(addr) {
			return c.what
		}
	}
	if v4, ok := embedded(addr); ok {
		if why := Restricted(v4); why != "" {
			return why + " (inside an IPv6 address)"
		}
	}
	return ""
}

// embedded returns the IPv4 address a NAT64 (64:ff9b::/96) or 6to4
// (2002::/16) address leads to.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), nat64Local.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)
