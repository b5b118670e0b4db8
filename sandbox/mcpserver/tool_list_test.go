package mcpserver_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestListFiveSandboxesFromSamples: the real server lists five sandboxes
// with the contract's fields and, once its background sampler has been
// round, non-zero memory for each with the sample's time.
func TestListFiveSandboxesFromSamples(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	// Other tests share the Docker engine; max_sandboxes counts them all.
	p := startServer(t, serverEnv(t, "[limits]\nmax_sandboxes = 100\n"))
	sess := sdkClient(t, p, nil)
	ids := createSandboxes(t, sess, 5)

	type entry struct {
		SandboxID string          `json:"sandbox_id"`
		Language  string          `json:"language"`
		Image     string          `json:"image"`
		State     string          `json:"state"`
		CreatedAt string          `json:"created_at"`
		ExpiresAt string          `json:"expires_at"`
		Limits    json.RawMessage `json:"limits"`
		Usage     struct {
			MemoryBytes *uint64  `json:"memory_bytes"`
			CPUPercent  *float64 `json:"cpu_percent"`
			Pids        *uint64  `json:"pids"`
			SampledAt   string   `json:"sampled_at"`
		} `json:"usage"`
	}
	var list struct {
		Sandboxes []entry `json:"sandboxes"`
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res := call(t, sess, "sandbox_list", nil)
		if res.IsError {
			t.Fatalf("sandbox_list: %s", text(res))
		}
		list.Sandboxes = nil
		structured(t, res, &list)
		sampled := 0
		for _, e := range list.Sandboxes {
			if e.Usage.SampledAt != "" && e.Usage.MemoryBytes != nil && *e.Usage.MemoryBytes > 0 {
				sampled++
			}
		}
		if sampled == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2m, %d of %d sandboxes have a usage sample: %s", sampled, len(ids), text(res))
		}
		time.Sleep(200 * time.Millisecond)
	}

	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	if len(list.Sandboxes) != len(ids) {
		t.Fatalf("listed %d sandboxes, want %d", len(list.Sandboxes), len(ids))
	}
	for _, e := range list.Sandboxes {
		if !want[e.SandboxID] {
			t.Errorf("listed unknown sandbox %q", e.SandboxID)
		}
		if e.Language != "python" || e.Image != testenv.PythonImage || e.State != "running" {
			t.Errorf("%s: language %q, image %q, state %q", e.SandboxID, e.Language, e.Image, e.State)
		}
		for name, v := range map[string]string{"created_at": e.CreatedAt, "expires_at": e.ExpiresAt, "usage.sampled_at": e.Usage.SampledAt} {
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				t.Errorf("%s: %s %q: %v", e.SandboxID, name, v, err)
			}
		}
		if len(e.Limits) == 0 || e.Usage.CPUPercent == nil || e.Usage.Pids == nil || *e.Usage.Pids == 0 {
			t.Errorf("%s: limits %s, usage %+v: contract fields missing", e.SandboxID, e.Limits, e.Usage)
		}
	}
}

// TestListSaysAgentAfterShortTimeout: a sandbox's first sandbox_exec, with
// a timeout shorter than the engine may take to start the command agent
// (Podman under load), keeps its output up to the timeout, and
// sandbox_list then says commands go to the agent, not docker exec.
func TestListSaysAgentAfterShortTimeout(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	// Other tests share the Docker engine; max_sandboxes counts them all.
	p := startServer(t, serverEnv(t, "[limits]\nmax_sandboxes = 100\n"))
	sess := sdkClient(t, p, nil)
	id := createSandboxes(t, sess, 1)[0]
	res := call(t, sess, "sandbox_exec", map[string]any{
		"sandbox_id": id, "command": "sleep 1000 & echo started; sleep 1000", "timeout_seconds": 2,
	})
	var out execOut
	structured(t, res, &out)
	if res.IsError || !out.TimedOut || out.ExitCode != 124 || out.Stdout != "started\n" {
		t.Errorf("sandbox_exec: %+v (%s)", out, text(res))
	}
	var list struct {
		Sandboxes []struct {
			SandboxID string `json:"sandbox_id"`
			Exec      string `json:"exec"`
			ExecNote  string `json:"exec_note"`
		} `json:"sandboxes"`
	}
	structured(t, call(t, sess, "sandbox_list", nil), &list)
	if len(list.Sandboxes) != 1 || list.Sandboxes[0].SandboxID != id || list.Sandboxes[0].Exec != "agent" {
		t.Errorf("sandbox_list = %+v, want %s on the agent", list.Sandboxes, id)
	}
}
