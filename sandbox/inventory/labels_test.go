package inventory

import (
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// TestLimitsFromLabels: limits come from the labels only when all of them
// are there and readable; containers made before the labels existed are
// inspected instead.
func TestLimitsFromLabels(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		ok     bool
		want   Limits
	}{
		{"all labels", map[string]string{backend.LabelMemoryMB: "512", backend.LabelCPUs: "0.5", backend.LabelPids: "256"}, true, Limits{MemoryMB: 512, CPUs: 0.5, Pids: 256, WorkspaceMB: 100}},
		{"made before the labels", map[string]string{backend.LabelWorkspaceMB: "100"}, false, Limits{WorkspaceMB: 100}},
		{"one missing", map[string]string{backend.LabelMemoryMB: "512", backend.LabelCPUs: "1"}, false, Limits{WorkspaceMB: 100}},
		{"unreadable", map[string]string{backend.LabelMemoryMB: "lots", backend.LabelCPUs: "1", backend.LabelPids: "256"}, false, Limits{WorkspaceMB: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Info{Limits: Limits{WorkspaceMB: 100}}
			if ok := limitsFromLabels(&in, tt.labels); ok != tt.ok || in.Limits != tt.want {
				t.Errorf("limitsFromLabels = %v, %+v; want %v, %+v", ok, in.Limits, tt.ok, tt.want)
			}
		})
	}
}

// TestExecTimeoutFromLabels: the exec timeout labelled at creation reaches
// the list entry (ps and the tray's Timeout column); a container made
// before the label shows none.
func TestExecTimeoutFromLabels(t *testing.T) {
	got := infoFromLabels(backend.ContainerInfo{Labels: map[string]string{backend.LabelID: "a", backend.LabelExecTimeout: "45"}})
	if got.Limits.ExecTimeoutSeconds != 45 {
		t.Errorf("labelled: exec timeout = %d, want 45", got.Limits.ExecTimeoutSeconds)
	}
	if got := infoFromLabels(backend.ContainerInfo{Labels: map[string]string{backend.LabelID: "b"}}); got.Limits.ExecTimeoutSeconds != 0 {
		t.Errorf("unlabelled: exec timeout = %d, want 0", got.Limits.ExecTimeoutSeconds)
	}
}
