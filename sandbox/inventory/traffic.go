package inventory

import "github.com/mcp-sandbox/mcp-sandbox/sandbox/state"

// Traffic is an allowlist sandbox's network summary as its state record
// holds it (the Lister's, for the window; sandbox_list asks its engine's
// Network). Arrays, not slices, so Info stays comparable by value; unused
// entries are zero, and Entries and RefusedHosts return the used ones.
type Traffic struct {
	// Known is set when the record had a summary (an allowlist sandbox
	// whose proxy started).
	Known   bool
	Allowed [state.MaxRecordAllowed]string
	// AllowedTotal counts the entries, listed or not.
	AllowedTotal int
	Refused      [state.MaxRecordRefused]state.HostHits
	// AllowedConns and RefusedConns count connections since the sandbox
	// began; BytesIn came from the hosts, BytesOut went to them.
	AllowedConns, RefusedConns int64
	BytesIn, BytesOut          int64
	Open                       int
}

// Entries returns the allow-list entries listed.
func (t Traffic) Entries() []string {
	var out []string
	for _, a := range t.Allowed {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

// RefusedHosts returns the refused hosts listed, most recent first.
func (t Traffic) RefusedHosts() []state.HostHits {
	var out []state.HostHits
	for _, r := range t.Refused {
		if r.Host != "" {
			out = append(out, r)
		}
	}
	return out
}

// trafficFrom fills an Info's Traffic from a record's summary (bounded
// when it was read).
func trafficFrom(n *state.NetworkSummary) Traffic {
	if n == nil {
		return Traffic{}
	}
	t := Traffic{Known: true, AllowedTotal: n.AllowedTotal, AllowedConns: n.AllowedConns, RefusedConns: n.RefusedConns,
		BytesIn: n.BytesIn, BytesOut: n.BytesOut, Open: n.Open}
	copy(t.Allowed[:], n.Allowed)
	copy(t.Refused[:], n.Refused)
	return t
}
