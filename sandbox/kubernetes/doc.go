// Package kubernetes is the engine's Kubernetes backend: each sandbox is a
// pod of one namespace (Pod, with every hardening default), made through
// an agent-sandbox Sandbox object when the cluster serves one
// (DiscoverAgentSandbox, AgentSandbox: the cluster deletes it at the
// sandbox's expiry) or as a plain pod (its activeDeadlineSeconds ends it
// then), each with a NetworkPolicy owned by it: deny-all (DenyAll) in
// network none and allowlist (whose connections ride the agent's stream),
// ingress denied and egress allowed in egress (EgressPolicy; Create fails
// when the pod then has no interface but loopback). Backend
// implements the backend contract (sandbox/backend) and its Attacher,
// Inspector, RuntimeChecker and ArchReporter: processes, the command
// agent, copies and stats run through the pods exec subresource
// (WebSocket, SPDY fallback) with the image's /bin/sh and tar; a kubelet
// pulls images; Usage takes memory and CPU from the metrics API
// (metrics.go: PodMetrics, the cluster's reading) where it is served and
// has a sample of the pod, else from inside the pod (its cgroup, or under
// gVisor the sandbox kernel's /proc: the sandbox's word), and pids always
// from inside. With Config.WarmPool, Create claims from agent-sandbox warm
// pools (warmclaim.go, warmpool.go): each claim names a ready pool
// sandbox it reserved (warmpick.go; with none ready, a Sandbox of its
// own), a pool grows under demand (warmgrow.go), and a Role without the
// pools' admin permissions uses the pools an admin made (warmadmin.go). Package installs (RunHelper,
// helper.go) run in a helper pod of their own (HelperPod: the sandbox's
// hardening and RuntimeClass, a fresh workspace, owned by the sandbox's
// pod, with activeDeadlineSeconds as a backstop) with a NetworkPolicy that
// selects it alone and allows it egress; the sandbox's pod never gets one
// from it. Kubernetes installs keep no download cache between installs:
// pods share no volume, so each helper starts with an empty one. The
// backend conformance suite runs against a real cluster
// (conformance_test.go, .ci/k8s-up).
//
// Kubernetes names are immutable DNS labels: the sandbox id is the object's
// name, and the engine's name (which Rename changes) and every contract
// label are annotations (labels too where the value is a valid label). A
// claimed warm-pool pod carries the sandbox's labels under
// sandbox.users.io/, the only domain agent-sandbox lets a claim set.
// CopyTo refuses, before the pod's tar sees it, an entry that is absolute,
// climbs with .., hard-links out, lies below a symlink of the same
// archive, or is a device or fifo. Runtime runsc or runc maps to the
// configured runtime_class only if that class runs that handler, else to a
// class that does, else it is an error. images.pull becomes the pods'
// imagePullPolicy, and "never" checks the nodes' image lists. clients.go
// builds gentype clients on a scheme of only core/v1, networking/v1,
// node/v1 and authorization/v1: client-go's typed clients register every
// API group (about 14 MB of the binary).
//
// Imports: sandbox/backend
package kubernetes
