package netproxy

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseEntry(t *testing.T) {
	tests := []struct {
		in   string
		want Entry
		str  string
	}{
		{"pypi.org", Entry{Name: "pypi.org"}, "pypi.org"},
		{"PyPI.org.", Entry{Name: "pypi.org"}, "pypi.org"},
		{"*.pythonhosted.org", Entry{Name: "pythonhosted.org", Wildcard: true}, "*.pythonhosted.org"},
		{"api.example.com:8443", Entry{Name: "api.example.com", Port: 8443}, "api.example.com:8443"},
		{"*.example.com:8080", Entry{Name: "example.com", Wildcard: true, Port: 8080}, "*.example.com:8080"},
		{"bücher.example", Entry{Name: "xn--bcher-kva.example"}, "xn--bcher-kva.example"},
		{"127.0.0.2:8080", Entry{Addr: netip.MustParseAddr("127.0.0.2"), Port: 8080}, "127.0.0.2:8080"},
		{"2130706434:80", Entry{Addr: netip.MustParseAddr("127.0.0.2"), Port: 80}, "127.0.0.2:80"},
		{"[fd00:ec2::254]:80", Entry{Addr: netip.MustParseAddr("fd00:ec2::254"), Port: 80}, "[fd00:ec2::254]:80"},
		{"[::ffff:10.0.0.1]:443", Entry{Addr: netip.MustParseAddr("10.0.0.1"), Port: 443}, "10.0.0.1:443"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseEntry(tt.in)
			if err != nil {
				t.Fatalf("ParseEntry(%q): %v", tt.in, err)
			}
			if e != tt.want || e.String() != tt.str {
				t.Errorf("ParseEntry(%q) = %+v (%s), want %+v (%s)", tt.in, e, e, tt.want, tt.str)
			}
			back, err := ParseEntry(e.String())
			if err != nil || back != e {
				t.Errorf("ParseEntry(%q) = %+v, %v; want it back", e.String(), back, err)
			}
		})
	}
}

func TestParseEntryRefuses(t *testing.T) {
	for _, in := range []string{
		"", "*", "*.com", "**.example.com", "a.*.example.com", "*example.com", "example.*",
		"https://pypi.org", "pypi.org/simple", "user@pypi.org", "pypi.org:0", "pypi.org:65536",
		"pypi.org:", "pypi.org:x", "pypi.org:+80", "pypi.org:080", "127.0.0.2", "[::1]", "::1:80",
		"*.127.0.0.1:80", "[fe80::1%eth0]:80", "1.2.3.999", "py pi.org", "pypi.org\n",
	} {
		t.Run(in, func(t *testing.T) {
			if e, err := ParseEntry(in); !errors.Is(err, ErrEntry) {
				t.Errorf("ParseEntry(%q) = %+v, %v; want ErrEntry", in, e, err)
			}
		})
	}
}

func TestEntryMatch(t *testing.T) {
	tests := []struct {
		entry, host string
		port        int
		want        bool
	}{
		{"pypi.org", "pypi.org", 443, true},
		{"pypi.org", "pypi.org", 80, true},
		{"pypi.org", "pypi.org", 8080, false},
		{"pypi.org", "www.pypi.org", 443, false},
		{"pypi.org", "evilpypi.org", 443, false},
		{"pypi.org", "pypi.org.evil.com", 443, false},
		{"*.pythonhosted.org", "files.pythonhosted.org", 443, true},
		{"*.pythonhosted.org", "a.b.pythonhosted.org", 443, true},
		{"*.pythonhosted.org", "pythonhosted.org", 443, false},
		{"*.pythonhosted.org", "evilpythonhosted.org", 443, false},
		{"*.pythonhosted.org", "files.pythonhosted.org", 22, false},
		{"api.example.com:8443", "api.example.com", 8443, true},
		{"api.example.com:8443", "api.example.com", 443, false},
		{"127.0.0.2:8080", "127.0.0.2", 8080, false}, // addresses never match as names
	}
	for _, tt := range tests {
		t.Run(tt.entry+" "+tt.host, func(t *testing.T) {
			e, err := ParseEntry(tt.entry)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.MatchName(tt.host, tt.port); got != tt.want {
				t.Errorf("%s.MatchName(%s, %d) = %v, want %v", tt.entry, tt.host, tt.port, got, tt.want)
			}
		})
	}
}

func TestEntryCovers(t *testing.T) {
	tests := []struct {
		e, o string
		want bool
	}{
		{"pypi.org", "pypi.org", true},
		{"pypi.org", "pypi.org:443", true},
		{"pypi.org", "pypi.org:8080", false},
		{"pypi.org:443", "pypi.org", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "*.a.example.com", true},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "example.com", false},
		{"a.example.com", "*.example.com", false},
		{"127.0.0.2:80", "127.0.0.2:80", true},
		{"127.0.0.2:80", "127.0.0.2:81", false},
	}
	for _, tt := range tests {
		t.Run(tt.e+" "+tt.o, func(t *testing.T) {
			e, err1 := ParseEntry(tt.e)
			o, err2 := ParseEntry(tt.o)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if got := e.Covers(o); got != tt.want {
				t.Errorf("%s covers %s = %v, want %v", tt.e, tt.o, got, tt.want)
			}
		})
	}
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"pypi.org", "*.pythonhosted.org:443", "0177.0.0.1", "2130706433", "0x7f.1",
		"[::ffff:127.0.0.1]:80", "[fe80::1%eth0]", "bücher.example.", "１２７.０.０.１", "xn--bcher-kva.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s)
		if err == nil {
			checkCanonicalHost(t, s, h)
		}
		e, err := ParseEntry(s)
		if err != nil {
			return
		}
		back, err := ParseEntry(e.String())
		if err != nil || back != e {
			t.Fatalf("entry %q = %+v; its spelling %q reads back as %+v, %v", s, e, e.String(), back, err)
		}
		if e.Addr.IsValid() && (e.Port == 0 || e.Addr.Zone() != "" || e.Addr.Is4In6()) {
			t.Fatalf("entry %q = %+v: an address entry without a port, with a zone or mapped", s, e)
		}
	})
}

// checkCanonicalHost holds what every accepted host must satisfy: a name
// is canonical (idempotent, lower-case ASCII, no trailing dot) and never
// spells an address; an address is unmapped.
func checkCanonicalHost(t *testing.T, in string, h Host) {
	t.Helper()
	if h.IsAddr() {
		if h.Addr.Is4In6() {
			t.Fatalf("ParseHost(%q) = %s: mapped address not unmapped", in, h.Addr)
		}
		return
	}
	again, err := ParseHost(h.Name)
	if err != nil || again != h {
		t.Fatalf("ParseHost(%q) = %q; again %+v, %v", in, h.Name, again, err)
	}
	if _, err := netip.ParseAddr(h.Name); err == nil {
		t.Fatalf("ParseHost(%q) = name %q, which is an address", in, h.Name)
	}
	for i := 0; i < len(h.Name); i++ {
		c := h.Name[i]
		if c >= 0x80 || c >= 'A' && c <= 'Z' {
			t.Fatalf("ParseHost(%q) = %q: not lower-case ASCII", in, h.Name)
		}
	}
	if h.Name[len(h.Name)-1] == '.' {
		t.Fatalf("ParseHost(%q) = %q ends in a dot", in, h.Name)
	}
	if _, ok, perr := parseIPv4Loose(h.Name); ok || perr != nil {
		t.Fatalf("ParseHost(%q) = name %q spells an IPv4 address", in, h.Name)
	}
}
