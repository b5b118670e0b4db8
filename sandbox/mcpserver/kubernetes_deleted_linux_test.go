package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A sandbox's pod deleted behind the server's back (kubectl delete pod)
// is named as removed, not as a container that exited with code 0.
func TestPodDeletedOnCluster(t *testing.T) {
	k := testKube(t)
	p := startServer(t, k.env(t))
	sess := sdkClient(t, p, nil)
	ctx := testContext(t, 3*time.Minute)
	res := call(t, sess, "sandbox_create", map[string]any{"language": "python"})
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &created)
	if res.IsError || created.SandboxID == "" {
		t.Fatalf("create: %s", text(res))
	}
	pod := k.podOf(ctx, t, created.SandboxID)
	if err := k.cs.CoreV1().Pods(k.ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": created.SandboxID, "command": "true"})
		msg := text(res)
		if res.IsError {
			t.Logf("after kubectl delete pod: %s", msg)
			if !strings.Contains(msg, "removed") || strings.Contains(msg, "code 0") {
				t.Errorf("after kubectl delete pod: %q; want it named as removed", msg)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("60 s after its pod was deleted the sandbox still runs commands: %q", msg)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
