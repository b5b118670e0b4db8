// Package kubernetes is the engine's Kubernetes backend: each sandbox is a
// pod of one namespace (Pod, with every hardening default), made through
// an agent-sandbox Sandbox object when the cluster serves one
// (DiscoverAgentSandbox, AgentSandbox: the cluster deletes it at the
// sandbox's expiry) or as a plain pod (its activeDeadlineSeconds ends it
// then), each with a deny-all NetworkPolicy owned by it (DenyAll). Backend
// implements the backend contract (sandbox/backend) and its Attacher,
// Inspector, RuntimeChecker and ArchReporter: processes, the command
// agent, copies and stats run through the pods exec subresource
// (WebSocket, SPDY fallback) with the image's /bin/sh and tar; a kubelet
// pulls images; Usage reads the container's cgroup (or, under gVisor, the
// sandbox kernel's /proc) from inside. With Config.WarmPool, Create claims
// from agent-sandbox warm pools (warmclaim.go, warmpool.go). Package
// installs (RunHelper, helper.go) run in a helper pod of their own
// (HelperPod: the sandbox's hardening and RuntimeClass, a fresh workspace,
// owned by the sandbox's pod, with activeDeadlineSeconds as a backstop)
// with a NetworkPolicy that selects it alone and allows it egress; the
// sandbox's pod never gets a network. Kubernetes installs keep no download
// cache between installs: pods share no volume, so each helper starts
// with an empty one. Not offered yet: a sandbox network other than none,
// the metrics API. The backend conformance suite runs against a real
// cluster (conformance_test.go, .ci/k8s-up).
package kubernetes
