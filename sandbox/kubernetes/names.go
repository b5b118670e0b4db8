package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Annotations the backend keeps on each sandbox pod (and Sandbox object)
// besides the contract's labels: what Kubernetes cannot say in its own
// fields, or cannot change once made.
const (
	// AnnotationName is the engine's name of the sandbox. A Kubernetes
	// name is immutable and must be a DNS label; the engine renames a
	// claimed sandbox, so its name lives here (Rename changes it).
	AnnotationName = "k8s.mcp-sandbox.io/name"
	// AnnotationNetwork is ContainerSpec.Network.
	AnnotationNetwork = "k8s.mcp-sandbox.io/network"
	// AnnotationPids is ContainerSpec.Pids: a pod cannot set a pids limit
	// (the node's podPidsLimit is the cap), so it is only recorded.
	AnnotationPids = "k8s.mcp-sandbox.io/pids"
	// AnnotationRuntime is the OCI runtime the pod's RuntimeClass runs
	// ("runsc", "runc"), or empty for the cluster's default.
	AnnotationRuntime = "k8s.mcp-sandbox.io/runtime"
	// AnnotationUser is the pod's "uid:gid", which every exec runs as.
	AnnotationUser = "k8s.mcp-sandbox.io/user"
	// AnnotationAgentSandbox is "true" on a pod made by an agent-sandbox
	// Sandbox object of the same name.
	AnnotationAgentSandbox = "k8s.mcp-sandbox.io/agent-sandbox"
)

// objectName is the Kubernetes name a sandbox named name is made as: the
// name itself when it is a DNS label, else the name prefix and a hash of
// it (the engine's names are "mcp-sandbox-" and a lower-case id, which
// pass as they are).
func objectName(name string) string {
	if dnsLabel.MatchString(name) {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return backend.NamePrefix + hex.EncodeToString(sum[:10])
}

// AnnotationClaim is the annotation of a sandbox pod claimed from a warm
// pool: the name of its SandboxClaim, which Remove and Expire act on.
const AnnotationClaim = "k8s.mcp-sandbox.io/claim"
