package netproxy

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseHost(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // canonical name, or address
		addr     bool
	}{
		{"name", "PyPI.org", "pypi.org", false},
		{"trailing dot", "pypi.org.", "pypi.org", false},
		{"idn", "bücher.example", "xn--bcher-kva.example", false},
		{"idn upper", "BÜCHER.example", "xn--bcher-kva.example", false},
		{"punycode given", "xn--bcher-kva.example", "xn--bcher-kva.example", false},
		{"underscore", "_srv.example.com", "_srv.example.com", false},
		{"numeric first label", "123.example.com", "123.example.com", false},
		{"dotted quad", "127.0.0.1", "127.0.0.1", true},
		{"dotted quad trailing dot", "127.0.0.1.", "127.0.0.1", true},
		{"decimal", "2130706433", "127.0.0.1", true},
		{"octal", "0177.0.0.1", "127.0.0.1", true},
		{"octal whole", "017700000001", "127.0.0.1", true},
		{"hex", "0x7f000001", "127.0.0.1", true},
		{"hex parts", "0x7f.0x0.0x0.0x1", "127.0.0.1", true},
		{"hex upper", "0X7F.1", "127.0.0.1", true},
		{"short two", "127.1", "127.0.0.1", true},
		{"short three", "127.0.1", "127.0.0.1", true},
		{"mixed", "0x7f.0.0.01", "127.0.0.1", true},
		{"leading zeros octal", "0000000177.0.0.1", "127.0.0.1", true},
		{"zero", "0", "0.0.0.0", true},
		{"unspecified", "0.0.0.0", "0.0.0.0", true},
		{"metadata decimal", "2852039166", "169.254.169.254", true},
		{"ipv6 bracketed", "[::1]", "::1", true},
		{"ipv6 bare", "::1", "::1", true},
		{"ipv4-mapped", "[::ffff:127.0.0.1]", "127.0.0.1", true},
		{"ipv4-mapped hex", "[::ffff:7f00:1]", "127.0.0.1", true},
		{"ipv6 zone", "[fe80::1%eth0]", "fe80::1%eth0", true},
		{"full-width digits", "１２７.０.０.１", "127.0.0.1", true},
		{"ideographic dots", "127。0。0。1", "127.0.0.1", true},
		{"circled digits", "①②⑦.0.0.1", "127.0.0.1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHost(tt.in)
			if err != nil {
				t.Fatalf("ParseHost(%q): %v", tt.in, err)
			}
			if h.IsAddr() != tt.addr || h.String() != tt.want {
				t.Errorf("ParseHost(%q) = %q (addr %v), want %q (addr %v)", tt.in, h, h.IsAddr(), tt.want, tt.addr)
			}
		})
	}
}

func TestParseHostRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"empty":              "",
		"numeric last label": "1.2.3.999",
		"five parts":         "1.2.3.4.5",
		"octal digit 8":      "0189.0.0.1",
		"part above 255":     "256.1",
		"decimal too large":  "4294967296",
		"hex too large":      "0x100000000",
		"empty label":        "a..b",
		"two trailing dots":  "pypi.org..",
		"space":              "py pi.org",
		"slash":              "pypi.org/x",
		"at":                 "user@pypi.org",
		"percent":            "%31%32%37.0.0.1",
		"hyphen start":       "-a.com",
		"long label":         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
		"unclosed bracket":   "[::1",
		"bracketed v4":       "[127.0.0.1]",
		"bad punycode":       "xn--a.com",
		"nul":                "a\x00.com",
		"newline":            "a.com\r\nX: y",
	} {
		t.Run(name, func(t *testing.T) {
			if h, err := ParseHost(in); !errors.Is(err, ErrHost) {
				t.Errorf("ParseHost(%q) = %v, %v; want ErrHost", in, h, err)
			}
		})
	}
}

func TestRestricted(t *testing.T) {
	tests := []struct {
		addr       string
		restricted bool
	}{
		{"127.0.0.1", true}, {"127.0.0.2", true}, {"::1", true},
		{"0.0.0.0", true}, {"::", true}, {"0.1.2.3", true},
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"169.254.170.2", true}, {"fe80::1", true},
		{"100.64.0.1", true}, {"100.100.100.200", true},
		{"fd00:ec2::254", true}, {"fc00::1", true}, {"fec0::1", true},
		{"224.0.0.1", true}, {"239.255.255.250", true}, {"ff02::1", true},
		{"255.255.255.255", true}, {"240.0.0.1", true},
		{"192.0.0.192", true}, {"168.63.129.16", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true}, {"::127.0.0.1", true},
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a9fe:a9fe", true}, {"2002:7f00:1::", true},
		{"fe80::1%eth0", true},
		{"8.8.8.8", false}, {"151.101.0.223", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		{"2a04:4e42::223", false}, {"64:ff9b::808:808", false}, {"2002:808:808::", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			why := Restricted(netip.MustParseAddr(tt.addr))
			if (why != "") != tt.restricted {
				t.Errorf("Restricted(%s) = %q, want restricted %v", tt.addr, why, tt.restricted)
			}
		})
	}
}
