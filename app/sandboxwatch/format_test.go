package sandboxwatch

import (
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

func TestCells(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	sampled := Row{
		Info: inventory.Info{
			CreatedAt: now.Add(-3*time.Hour - 5*time.Minute), ExpiresAt: now.Add(25 * time.Minute),
			Limits:  inventory.Limits{MemoryMB: 512, Pids: 256},
			Usage:   backend.Usage{MemoryBytes: 41<<20 + 200<<10, CPUPercent: 3.14159, Pids: 4},
			Network: "none", Client: "claude-ai",
		},
		Sampled: now,
	}
	fresh := Row{Info: inventory.Info{CreatedAt: now.Add(-10 * time.Second), Limits: inventory.Limits{MemoryMB: 1024}}}
	listed := Row{Info: inventory.Info{Network: "allowlist", Traffic: inventory.Traffic{Known: true, AllowedTotal: 3, RefusedConns: 1,
		BytesIn: 1300, BytesOut: 300, Open: 2}}}
	quiet := Row{Info: inventory.Info{Network: "allowlist", Traffic: inventory.Traffic{Known: true, AllowedTotal: 1}}}
	tests := []struct {
		name, got, want string
	}{
		{"age", sampled.Age(now), "3h05m"},
		{"age seconds", fresh.Age(now), "10s"},
		{"expires", sampled.Expires(now), "in 25m"},
		{"no expiry", fresh.Expires(now), "–"},
		{"expired", Row{Info: inventory.Info{ExpiresAt: now.Add(-time.Second)}}.Expires(now), "now"},
		{"cpu", sampled.CPU(), "3.1 %"},
		{"cpu unsampled", fresh.CPU(), "–"},
		{"memory", sampled.Memory(), "41.2 MB / 512 MB"},
		{"memory unsampled", fresh.Memory(), "– / 1 GB"},
		{"pids", sampled.Pids(), "4 / 256"},
		{"usage by the engine", sampled.UsageSource(), ""},
		{"usage by the metrics API", Row{Info: inventory.Info{Usage: backend.Usage{Source: backend.UsageMetrics}}, Sampled: now}.UsageSource(), "usage by the cluster's metrics API"},
		{"usage read inside", Row{Info: inventory.Info{Usage: backend.Usage{Source: backend.UsageInPod}}, Sampled: now}.UsageSource(), "usage read inside the sandbox"},
		{"usage source unsampled", Row{Info: inventory.Info{Usage: backend.Usage{Source: backend.UsageInPod}}}.UsageSource(), ""},
		{"pids unsampled, no limit", fresh.Pids(), "–"},
		{"network none", sampled.NetworkSummary(), "none"},
		{"network unknown", fresh.NetworkSummary(), "–"},
		{"network egress", Row{Info: inventory.Info{Network: "egress"}}.NetworkSummary(), "egress"},
		{"allowlist before its proxy", Row{Info: inventory.Info{Network: "allowlist"}}.NetworkSummary(), "allowlist"},
		{"allowlist", listed.NetworkSummary(), "allowlist · 3 hosts · 1 refused"},
		{"allowlist, none refused", quiet.NetworkSummary(), "allowlist · 1 host"},
		{"traffic", listed.TrafficLabel(), "↓ 1.3 KB ↑ 300 B · 2 open"},
		{"no traffic", quiet.TrafficLabel(), "↓ 0 B ↑ 0 B"},
		{"traffic of none", sampled.TrafficLabel(), ""},
		{"client", sampled.ClientLabel(), "Claude Desktop"},
		{"no client", fresh.ClientLabel(), "–"},
		{"running", Row{Info: inventory.Info{State: "running"}}.StateLabel(), "running"},
		{"exited", Row{Info: inventory.Info{State: "exited"}}.StateLabel(), "exited"},
		{"paused", Row{Info: inventory.Info{State: "paused"}}.StateLabel(), "paused"},
		{"warm", Row{Info: inventory.Info{State: "running", Pool: true}}.StateLabel(), "warm"},
		{"no state", fresh.StateLabel(), "–"},
		{"days", Duration(50 * time.Hour), "2d2h"},
		{"bytes", Bytes(900 << 10), "900 KB"},
		{"small bytes", Bytes(12), "12 B"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
