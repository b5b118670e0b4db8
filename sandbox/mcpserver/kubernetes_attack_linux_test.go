package mcpserver_test

import "testing"

// The fence and memory-budget attacks on the real server with backend.kind = "kubernetes",
// on the test cluster MCP_SANDBOX_TEST_KUBECONFIG names (skipped without
// it): the same attacks as on Docker (TestAttack*), each against a server
// of its own in the test's namespace. The swap races run fewer rounds
// than on Docker, each copy being a pods/exec round trip through the API
// server.
func TestAttacksOnCluster(t *testing.T) {
	k := testKube(t)
	for _, a := range []struct {
		name   string
		attack func(*testing.T, backendEnv)
	}{
		{"CopyOutTarOptionsLinks", attackCopyOutTarOptionsLinks},
		{"ConcurrentCopyOut", attackConcurrentCopyOut},
		{"SpecialFilesInCopies", attackSpecialFilesInCopies},
		{"HostSwapDuringCopyOut", func(t *testing.T, env backendEnv) { attackHostSwapDuringCopyOut(t, env, 60) }},
		{"SandboxSwapDuringRead", func(t *testing.T, env backendEnv) { attackSandboxSwapDuringRead(t, env, 60) }},
		{"FloodServerMemory", attackFloodServerMemory},
	} {
		t.Run(a.name, func(t *testing.T) { a.attack(t, k.serverEnv) })
	}
}
