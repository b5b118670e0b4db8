package mcpserver_test

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// k8sGoneWithin is how long a dead server's sandbox may outlive it on the
// cluster: its watchdog's removal, and the pod's deletion by the kubelet.
const k8sGoneWithin = 30 * time.Second

// The attacks of the fence, budget and agent issues on the real server
// with backend.kind = "kubernetes", on the test cluster
// MCP_SANDBOX_TEST_KUBECONFIG names (skipped without it): the same
// attacks as on Docker (TestAttack*), each against a server of its own in
// the test's namespace, in parallel (-parallel bounds them). The swap
// races run 40 rounds rather than Docker's 300, each copy being a
// pods/exec round trip through the API server. The stream attack's flood
// past the credit may end in an error or in a clean end of the preview's
// body, there as on runsc: either way no more than the credit is carried.
func TestAttacksOnCluster(t *testing.T) {
	k := testKube(t)
	for _, a := range []struct {
		name   string
		attack func(*testing.T, backendEnv)
	}{
		{"CopyOutTarOptionsLinks", attackCopyOutTarOptionsLinks},
		{"ConcurrentCopyOut", attackConcurrentCopyOut},
		{"SpecialFilesInCopies", attackSpecialFilesInCopies},
		{"HostSwapDuringCopyOut", func(t *testing.T, env backendEnv) { attackHostSwapDuringCopyOut(t, env, 40) }},
		{"SandboxSwapDuringRead", func(t *testing.T, env backendEnv) { attackSandboxSwapDuringRead(t, env, 40) }},
		{"ReadDenyOtherNames", attackReadDenyOtherNames},
		{"WriteDenyHome", attackWriteDenyHome},
		{"FloodServerMemory", attackFloodServerMemory},
		{"StoppedAgent", attackStoppedAgent},
		{"HostileAgent", attackHostileAgent},
		{"EnvReachesServerProcesses", attackEnvReachesServerProcesses},
		{"ReadEndlessFiles", attackReadEndlessFiles},
		{"AgentBadAnswerEndsIt", attackAgentBadAnswerEndsIt},
		{"HostileAgentStreams", attackHostileAgentStreams},
	} {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			a.attack(t, k.serverEnv)
		})
	}
}

// Allowlist networking on the cluster: a gVisor sandbox with no pod
// network reaches an allowed host server on the server's host through
// its agent's proxy, and is answered 403 for another, as on Docker
// (TestAllowlistOverStdio); sandbox_list, the audit log, the state record
// and the logs resource show the same.
func TestAllowlistOnCluster(t *testing.T) {
	allowlistOverStdio(t, testKube(t).serverEnv)
}

// A server on the cluster SIGKILLed (its watchdog left running), with a
// sandbox and a command streaming in it: its watchdog removes the
// sandbox's pod, Sandbox and NetworkPolicy within a bound, and says so in
// the server log — the cluster's own shutdownTime, minutes away, is not
// what removed them (TestServerSIGKILLOnCluster checks that one).
func TestServerDeathOnCluster(t *testing.T) {
	k := testKube(t)
	env := k.env(t)
	s := startRaw(t, env)
	ctx := testContext(t, 3*time.Minute)
	res := s.request(t, "tools/call", map[string]any{"name": "sandbox_create", "arguments": map[string]any{"language": "python"}})
	var created struct {
		Structured struct {
			SandboxID string `json:"sandbox_id"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &created); err != nil || created.Structured.SandboxID == "" {
		t.Fatalf("create: %v %s", err, res)
	}
	s.sbID = created.Structured.SandboxID
	pod := k.podOf(ctx, t, s.sbID)
	p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := p.Annotations[backend.LabelOwner]
	if owner == "" {
		owner = p.Labels[backend.LabelOwner]
	}
	if owner == "" {
		t.Fatalf("pod %s names no owner: %v %v", pod, p.Labels, p.Annotations)
	}
	s.stream(t)
	start := time.Now()
	s.signal(syscall.SIGKILL)
	k.waitGone(ctx, t, pod, k8sGoneWithin)
	t.Logf("pod, Sandbox and NetworkPolicy gone %v after the server's SIGKILL", time.Since(start).Round(time.Millisecond))
	waitWatchdogReport(t, env, owner)
}
