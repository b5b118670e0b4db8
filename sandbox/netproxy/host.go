package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrHost is the class of a host name or address that cannot be used.
var ErrHost = errors.New("not a valid host")

// maxHostLen bounds a host name (DNS allows 253 characters).
const maxHostLen = 253

// Host is a host as the proxy compares it: a canonical name (lower case,
// punycode, no trailing dot) or an IP address.
type Host struct {
	// Name is the canonical name; empty for an address.
	Name string
	// Addr is the address when the host was an IP literal, in any
	// spelling; IPv4-mapped IPv6 is unmapped. It may carry a zone.
	Addr netip.Addr
}

// IsAddr reports whether the host is an IP literal.
func (h Host) IsAddr() bool { return h.Addr.IsValid() }

// String is the canonical spelling: the name, or the address (IPv6 in
// brackets are added by JoinHostPort where a port follows).
func (h Host) String() string {
	if h.IsAddr() {
		return h.Addr.String()
	}
	return h.Name
}

// ParseHost canonicalises a host as a client names it: an IPv6 literal in
// brackets (a zone allowed, so it can be refused by name), an IPv4 literal
// in any spelling inet_aton accepts (decimal 2130706433, octal 0177.0.0.1,
// hex 0x7f.1, short 127.1), or a name, lower-cased, converted to punycode
// and stripped of one trailing dot. A name whose last label is numeric must
// be an IPv4 literal: "1.2.3.999" is refused, not looked up.
func ParseHost(s string) (Host, error) {
	if len(s) == 0 || len(s) > 2*maxHostLen {
		return Host{}, fmt.Errorf("%w: %q is empty or too long", ErrHost, clip(s))
	}
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return Host{}, fmt.Errorf("%w: %q has an unclosed bracket", ErrHost, clip(s))
		}
		a, err := netip.ParseAddr(s[1 : len(s)-1])
		if err != nil || !a.Is6() {
			return Host{}, fmt.Errorf("%w: %q is not an IPv6 address", ErrHost, clip(s))
		}
		return Host{Addr: a.Unmap()}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return Host{Addr: a.Unmap()}, nil
	}
	name := strings.ToLower(s)
	if !isASCII(name) {
		// UTS 46 mapping also folds full-width and other look-alike digits
		// and dots, so a mapped name is checked for an address again.
		a, err := idna.Lookup.ToASCII(name)
		if err != nil {
			return Host{}, fmt.Errorf("%w: %q is not a valid international name: %v", ErrHost, clip(s), err)
		}
		name = a
	}
	name = strings.TrimSuffix(name, ".")
	if a, ok, err := parseIPv4Loose(name); ok || err != nil {
		if err != nil {
			return Host{}, fmt.Errorf("%w: %q: %v", ErrHost, clip(s), err)
		}
		return Host{Addr: a}, nil
	}
	if err := checkName(name); err != nil {
		return Host{}, fmt.Errorf("%w: %q: %v", ErrHost, clip(s), err)
	}
	if strings.Contains(name, "xn--") {
		// Punycode given as such must decode to a valid name too.
		if _, err := idna.Lookup.ToUnicode(name); err != nil {
			return Host{}, fmt.Errorf("%w: %q holds invalid punycode", ErrHost, clip(s))
		}
	}
	return Host{Name: name}, nil
}

// checkName accepts letters, digits and hyphens in labels of 1 to 63
// characters, a hyphen neither first nor last, and underscores (some
// service names have them).
func checkName(name string) error {
	if name == "" || len(name) > maxHostLen {
		return errors.New("a host name has 1 to 253 characters")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("a host name's labels have 1 to 63 characters")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("a label of a host name neither starts nor ends with a hyphen")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("a host name holds only letters, digits, hyphens and dots (not %q)", c)
			}
		}
	}
	return nil
}

// parseIPv4Loose parses the IPv4 spellings of inet_aton and the WHATWG URL
// standard. ok is false when s does not look like an address at all (its
// last label is not a number); err is set when it looks like one but is
// not valid, which must be refused rather than looked up.
func parseIPv4Loose(s string) (netip.Addr, bool, error) {
	parts := strings.Split(s, ".")
	if !isNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, false, errors.New("looks like an IPv4 address but has more than four parts")
	}
	var vals []uint64
	for _, p := range parts {
		v, err := parseIPv4Part(p)
		if err != nil {
			return netip.Addr{}, false, err
		}
		vals = append(vals, v)
	}
	var n uint64
	for _, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false, errors.New("an IPv4 part is above 255")
		}
		n = n<<8 | v
	}
	rest := 8 * uint(5-len(vals))
	last := vals[len(vals)-1]
	if last >= 1<<rest {
		return netip.Addr{}, false, errors.New("the IPv4 address is out of range")
	}
	n = n<<rest | last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true, nil
}

// isNumber reports whether a label is a decimal, octal or 0x hex number.
func isNumber(p string) bool {
	if p == "" {
		return false
	}
	if len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
		for _, c := range p[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseIPv4Part parses one part: 0x hex, a leading 0 octal, else decimal.
func parseIPv4Part(p string) (uint64, error) {
	if !isNumber(p) {
		return 0, fmt.Errorf("%q is not a number", clip(p))
	}
	base, digits := 10, p
	switch {
	case len(p) >= 2 && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" {
		return 0, nil
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, nil
	}
	if len(digits) > 12 {
		return 0, errors.New("the IPv4 address is out of range")
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a valid number", clip(p))
	}
	return v, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// clip shortens what a client sent for an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
