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
// pulls images; Usage takes memory and CPU from the metrics API
// (metrics.go: PodMetrics, the cluster's reading) where it is served and
// has a sample of the pod, else from inside the pod (its cgroup, or under
// gVisor the sandbox kernel's /proc: the sandbox's word), and pids always
// from inside. With Config.WarmPool, Create claims from agent-sandbox warm
// pools (warmclaim.go, warmpool.go). Not offered yet: package installs
// (RunHelper), a network other than none. The backend conformance suite runs against a real cluster
// (conformance_test.go, .ci/k8s-up).
package kubernetes
