// Package kubernetes is the start of a Kubernetes backend for the sandbox
// engine: today only the pod and NetworkPolicy a sandbox would be made as
// (Pod, DenyAll), with every hardening default, and the agent-sandbox
// Sandbox object that makes that pod and that the cluster deletes at the
// sandbox's expiry (DiscoverAgentSandbox, AgentSandbox), checked by unit
// tests and against a real cluster (.ci/k8s-up). It is not a backend yet, and no
// program links it: a config with backend.kind = "kubernetes" is refused as
// not yet available (sandbox/config).
package kubernetes
