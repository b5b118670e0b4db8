package state

import "github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"

// The bounds of a record's network summary. Its refused hosts are named
// by the sandbox (whatever its programs asked the proxy for), so the list,
// each name and each entry are capped and cleaned before they are written
// and again when they are read (a record is a file on disk).
const (
	// MaxRecordRefused is how many refused hosts a record lists (the
	// most recent ones; the proxy keeps more, sandbox_list shows them).
	MaxRecordRefused = 8
	// MaxRecordAllowed is how many allow-list entries a record lists.
	MaxRecordAllowed = 32
	// MaxRecordHost caps a host (or entry) name in runes: a DNS name is
	// at most 253 characters, and ":port" is added.
	MaxRecordHost = 253 + len(":65535")
)

// NetworkSummary is what an allowlist sandbox's proxy has done, as its
// owning server last wrote it: the entries it may reach, the hosts it was
// refused most recently with how often, the bytes each way and the
// connections open then.
type NetworkSummary struct {
	Allowed []string `json:"allowed,omitempty"`
	// AllowedTotal counts the entries, listed or not.
	AllowedTotal int        `json:"allowed_total,omitempty"`
	Refused      []HostHits `json:"refused,omitempty"`
	// Connections allowed and refused, counted since the sandbox began.
	AllowedConns int64 `json:"allowed_connections"`
	RefusedConns int64 `json:"refused_connections"`
	BytesIn      int64 `json:"bytes_in"`
	BytesOut     int64 `json:"bytes_out"`
	Open         int   `json:"open"`
}

// HostHits is a refused host (host:port) and how often it was refused.
type HostHits struct {
	Host  string `json:"host"`
	Count int    `json:"count"`
}

// Bounded returns n within the record's bounds: at most MaxRecordAllowed
// entries and MaxRecordRefused hosts, each name cleaned of control and
// format characters and capped at MaxRecordHost runes, counts never
// negative. A nil n stays nil.
func (n *NetworkSummary) Bounded() *NetworkSummary {
	if n == nil {
		return nil
	}
	out := &NetworkSummary{
		AllowedTotal: max(n.AllowedTotal, len(n.Allowed)),
		AllowedConns: max(n.AllowedConns, 0), RefusedConns: max(n.RefusedConns, 0),
		BytesIn: max(n.BytesIn, 0), BytesOut: max(n.BytesOut, 0), Open: max(n.Open, 0),
	}
	for _, a := range n.Allowed[:min(len(n.Allowed), MaxRecordAllowed)] {
		out.Allowed = append(out.Allowed, printable.Clean(a, MaxRecordHost))
	}
	for _, r := range n.Refused[:min(len(n.Refused), MaxRecordRefused)] {
		out.Refused = append(out.Refused, HostHits{Host: printable.Clean(r.Host, MaxRecordHost), Count: max(r.Count, 0)})
	}
	return out
}
