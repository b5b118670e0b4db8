package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestNetworkSummaryBounded: the refused hosts a sandbox named reach a
// record capped in number and length and cleaned of control characters,
// whether the record is written or read from a file someone else wrote.
func TestNetworkSummaryBounded(t *testing.T) {
	long := strings.Repeat("a", 300) + ".example:443"
	hostile := "evil\x1b[31m.example\n\u202e:443"
	var refused []HostHits
	for i := range 20 {
		refused = append(refused, HostHits{Host: fmt.Sprintf("h%d.example:443", i), Count: i})
	}
	refused[0], refused[1], refused[2] = HostHits{long, 3}, HostHits{hostile, 1}, HostHits{"neg.example:80", -5}
	var allowed []string
	for i := range 40 {
		allowed = append(allowed, fmt.Sprintf("a%d.example", i))
	}
	in := &NetworkSummary{Allowed: allowed, Refused: refused, BytesIn: -1, BytesOut: 7, Open: -2, RefusedConns: 9}

	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteRecord(Record{ID: "abcd1234", Traffic: in}); err != nil {
		t.Fatal(err)
	}
	written, err := st.ReadRecord("abcd1234")
	if err != nil {
		t.Fatal(err)
	}
	// A file written by hand (not through WriteRecord) is bounded on read.
	if err := os.WriteFile(filepath.Join(st.Dir(), "sandboxes", "efgh5678.json"),
		fmt.Appendf(nil, `{"sandbox_id":"efgh5678","traffic":{"refused":[{"host":%s,"count":1}],"allowed":[%s]}}`, js(hostile+long), js(long)), 0o600); err != nil {
		t.Fatal(err)
	}
	read, err := st.ReadRecord("efgh5678")
	if err != nil {
		t.Fatal(err)
	}

	for name, n := range map[string]*NetworkSummary{"written": written.Traffic, "read": read.Traffic} {
		if len(n.Refused) > MaxRecordRefused || len(n.Allowed) > MaxRecordAllowed {
			t.Errorf("%s: %d refused, %d allowed listed", name, len(n.Refused), len(n.Allowed))
		}
		for _, h := range append(n.Allowed, hostsOf(n.Refused)...) {
			if utf8.RuneCountInString(h) > MaxRecordHost || strings.ContainsAny(h, "\x1b\n\u202e") {
				t.Errorf("%s: host %q not bounded or cleaned", name, h)
			}
		}
	}
	want := &NetworkSummary{
		Allowed: allowed[:MaxRecordAllowed], AllowedTotal: 40, RefusedConns: 9, BytesOut: 7,
		Refused: []HostHits{
			{strings.Repeat("a", MaxRecordHost-1) + "…", 3}, {"evil[31m.example:443", 1}, {"neg.example:80", 0},
			{"h3.example:443", 3}, {"h4.example:443", 4}, {"h5.example:443", 5}, {"h6.example:443", 6}, {"h7.example:443", 7},
		},
	}
	if d := cmp.Diff(want, written.Traffic); d != "" {
		t.Errorf("written record (-want +got):\n%s", d)
	}
	if (Record{}).Traffic.Bounded() != nil {
		t.Error("a record without traffic gained one")
	}
}

func js(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func hostsOf(hs []HostHits) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Host
	}
	return out
}
