package sandboxwatch

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// The cells of a row, formatted for people. Usage columns show "–" until
// the first sample.

const none = "–"

// Age is how long the sandbox has existed: "45s", "12m", "3h05m", "2d4h".
func (r Row) Age(now time.Time) string { return Duration(now.Sub(r.CreatedAt)) }

// Expires says when an idle sandbox is removed: "in 25m", "now", or "–"
// when it has no expiry.
func (r Row) Expires(now time.Time) string {
	if r.ExpiresAt.IsZero() {
		return none
	}
	d := r.ExpiresAt.Sub(now)
	if d <= 0 {
		return "now"
	}
	return "in " + Duration(d)
}

// StateLabel is the row's state by the counting rule (Count): "warm" for
// an unclaimed warm-pool container, otherwise the engine's state of a
// sandbox's container ("running", "paused", "exited", "created", …), or
// "–" when the engine said none.
func (r Row) StateLabel() string {
	switch {
	case r.Pool:
		return "warm"
	case r.State == "":
		return none
	}
	return r.State
}

// CPU is "used / limit": the use in percent of one core, and the limit
// in cores.
func (r Row) CPU() string {
	used := none
	if !r.Sampled.IsZero() {
		used = strconv.FormatFloat(r.Usage.CPUPercent, 'f', 1, 64) + " %"
	}
	if r.Limits.CPUs <= 0 {
		return used
	}
	return used + " / " + strconv.FormatFloat(r.Limits.CPUs, 'g', 3, 64) + " CPU"
}

// Memory is "used / limit".
func (r Row) Memory() string {
	limit := uint64(r.Limits.MemoryMB) << 20
	if limit == 0 {
		limit = r.Usage.MemoryLimit
	}
	used := none
	if !r.Sampled.IsZero() {
		used = Bytes(r.Usage.MemoryBytes)
	}
	if limit == 0 {
		return used
	}
	return used + " / " + Bytes(limit)
}

// UsageSource says whose reading the usage is where the engine has two
// (Kubernetes: the cluster's metrics API, or a read inside the sandbox,
// which code in it can misreport); "" on Docker and before a sample.
func (r Row) UsageSource() string {
	if r.Sampled.IsZero() {
		return ""
	}
	switch r.Usage.Source {
	case backend.UsageMetrics:
		return "usage by the cluster's metrics API"
	case backend.UsageInPod:
		return "usage read inside the sandbox"
	}
	return ""
}

// Pids is "running / limit".
func (r Row) Pids() string {
	used := none
	if !r.Sampled.IsZero() {
		used = strconv.FormatUint(r.Usage.Pids, 10)
	}
	if r.Limits.Pids == 0 {
		return used
	}
	return used + " / " + strconv.Itoa(r.Limits.Pids)
}

// NetworkLabel is the network mode: "none", "allowlist" or "egress".
func (r Row) NetworkLabel() string {
	if r.Network == "" {
		return none
	}
	return r.Network
}

// NetworkSummary is the network in a few words: "none", "egress",
// "allowlist", and for an allowlist sandbox whose record has its
// counters, how many entries it may reach and how many connections were
// refused ("allowlist · 3 hosts · 1 refused").
func (r Row) NetworkSummary() string {
	s := r.NetworkLabel()
	if r.Network != "allowlist" || !r.Traffic.Known {
		return s
	}
	s += " · " + plural(r.Traffic.AllowedTotal, "host", "hosts")
	if r.Traffic.RefusedConns > 0 {
		s += " · " + strconv.FormatInt(r.Traffic.RefusedConns, 10) + " refused"
	}
	return s
}

// TrafficLabel is an allowlist sandbox's bytes each way ("↓ 1.2 KB ↑ 300 B",
// in from the hosts, out to them) and its open connections, or "" when
// its record has no counters.
func (r Row) TrafficLabel() string {
	if r.Network != "allowlist" || !r.Traffic.Known {
		return ""
	}
	s := "↓ " + Bytes(uint64(max(r.Traffic.BytesIn, 0))) + " ↑ " + Bytes(uint64(max(r.Traffic.BytesOut, 0)))
	if r.Traffic.Open > 0 {
		s += " · " + strconv.Itoa(r.Traffic.Open) + " open"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// ClientLabel names the client, or "–".
func (r Row) ClientLabel() string {
	if r.Client == "" {
		return none
	}
	return clientconfig.DisplayForMCPName(r.Client)
}

// Duration is a short, rounded duration: "45s", "12m", "3h05m", "2d4h".
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Bytes is a size in binary units: "512 MB", "41.2 MB", "900 KB".
func Bytes(b uint64) string {
	const k = 1024
	switch {
	case b >= k*k*k:
		return trim(float64(b)/(k*k*k)) + " GB"
	case b >= k*k:
		return trim(float64(b)/(k*k)) + " MB"
	case b >= k:
		return trim(float64(b)/k) + " KB"
	}
	return strconv.FormatUint(b, 10) + " B"
}

// trim keeps one decimal below 100, none above or when it is zero.
func trim(f float64) string {
	if f >= 100 || f == float64(int64(f)) {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}
