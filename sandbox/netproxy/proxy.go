package netproxy

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is one sandbox's proxy: its entries, its answers from a person,
// its limits and its counters. Serve handles one connection; call it
// once per connection, concurrently.
type Proxy struct {
	opts Options

	open     atomic.Int64
	allowed  atomic.Int64
	refused  atomic.Int64
	bytesIn  atomic.Int64
	bytesOut atomic.Int64

	mu          sync.Mutex
	entries     []Entry
	decided     map[string]Decision
	asking      map[string]*askCall
	refusedBy   map[string]*hostCount
	refusedTick uint64
}

// hostCount is a refused host's count and when it was last refused.
type hostCount struct {
	count int
	last  uint64
}

// New returns a proxy with o's entries and limits.
func New(o Options) *Proxy {
	o = o.withDefaults()
	return &Proxy{
		opts:      o,
		entries:   slices.Clone(o.Entries),
		decided:   map[string]Decision{},
		asking:    map[string]*askCall{},
		refusedBy: map[string]*hostCount{},
	}
}

// SetEntries replaces the entries allowed without asking (the config
// changed); connections already open stay open.
func (p *Proxy) SetEntries(entries []Entry) {
	p.mu.Lock()
	p.entries = slices.Clone(entries)
	p.mu.Unlock()
}

// Entries returns the entries allowed without asking.
func (p *Proxy) Entries() []Entry {
	return slices.Clone(p.entryList())
}

func (p *Proxy) entryList() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries
}

// Record is what the audit log keeps of one CONNECT tunnel, one plain
// request, or one connection refused before a request was read.
type Record struct {
	Start time.Time
	// Method is CONNECT, the plain request's method, or "" when no
	// request was read.
	Method string
	// Host is canonical when it could be read (else as sent, cleaned and
	// cut short); Port is 0 when unknown.
	Host string
	Port int
	// Allowed is true when the rules let the connection through; Reason
	// then is empty, else it says why it was refused.
	Allowed bool
	Reason  string
	// Addr is the address dialled; Error says why reaching it failed.
	Addr  string
	Error string
	// Status is the HTTP status the proxy answered or relayed.
	Status int
	// BytesIn went from the host to the sandbox, BytesOut the other way,
	// as relayed (a plain request's heads included; the proxy's own
	// answers not).
	BytesIn, BytesOut int64
	Duration          time.Duration
}

// HostCount is a refused host and how often it was refused.
type HostCount struct {
	Host  string `json:"host"`
	Count int    `json:"count"`
}

// Stats are a proxy's counters, for sandbox_list.
type Stats struct {
	// Open is how many connections are being served now.
	Open     int   `json:"open"`
	Allowed  int64 `json:"allowed"`
	Refused  int64 `json:"refused"`
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	// RefusedHosts are the most recently refused hosts (host:port),
	// newest first, at most Options.MaxRefusedHosts of them.
	RefusedHosts []HostCount `json:"refused_hosts"`
}

// Stats returns the counters now.
func (p *Proxy) Stats() Stats {
	s := Stats{
		Open: int(min(p.open.Load(), int64(p.opts.MaxConns))), Allowed: p.allowed.Load(), Refused: p.refused.Load(),
		BytesIn: p.bytesIn.Load(), BytesOut: p.bytesOut.Load(), RefusedHosts: []HostCount{},
	}
	p.mu.Lock()
	type ranked struct {
		HostCount
		last uint64
	}
	var rs []ranked
	for h, c := range p.refusedBy {
		rs = append(rs, ranked{HostCount{h, c.count}, c.last})
	}
	p.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].last > rs[j].last })
	for _, r := range rs {
		s.RefusedHosts = append(s.RefusedHosts, r.HostCount)
	}
	return s
}

// noteRefused counts a refusal of hostport, forgetting the host refused
// longest ago when the list is full.
func (p *Proxy) noteRefused(hostport string) {
	p.refused.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusedTick++
	if c, ok := p.refusedBy[hostport]; ok {
		c.count++
		c.last = p.refusedTick
		return
	}
	if len(p.refusedBy) >= p.opts.MaxRefusedHosts {
		oldest, at := "", ^uint64(0)
		for h, c := range p.refusedBy {
			if c.last < at {
				oldest, at = h, c.last
			}
		}
		delete(p.refusedBy, oldest)
	}
	p.refusedBy[hostport] = &hostCount{count: 1, last: p.refusedTick}
}
