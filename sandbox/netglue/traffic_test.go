package netglue

import (
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestTraffic: no counters, no summary; a summary keeps at most
// state.MaxRecordRefused refused hosts.
func TestTraffic(t *testing.T) {
	if Traffic([]string{"a.example"}, nil) != nil {
		t.Fatal("a summary without counters")
	}
	st := &netproxy.Stats{Allowed: 2, Refused: 3, BytesIn: 5, BytesOut: 7, Open: 1}
	for range state.MaxRecordRefused + 3 {
		st.RefusedHosts = append(st.RefusedHosts, netproxy.HostCount{Host: "x.example", Count: 1})
	}
	got := Traffic([]string{"a.example"}, st)
	if got.AllowedConns != 2 || got.RefusedConns != 3 || got.BytesIn != 5 || got.BytesOut != 7 || got.AllowedTotal != 1 {
		t.Errorf("counters: %+v", got)
	}
	if len(got.Refused) > state.MaxRecordRefused {
		t.Errorf("%d refused hosts kept", len(got.Refused))
	}
}
