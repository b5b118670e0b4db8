package kubernetes

import (
	"fmt"
	"maps"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// ContainerName is the name of the one container in a sandbox pod.
const ContainerName = "sandbox"

// keepAlive is the pod's main process, the same as the Docker backend's: it
// does nothing but wait to be stopped; the engine's processes are execs.
var keepAlive = []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT HUP; while :; do sleep 3600 & wait $!; done"}

// Options are the backend's settings from the [kubernetes] table that shape
// a pod.
type Options struct {
	Namespace string
	// RuntimeClass is the pod's runtimeClassName (e.g. "gvisor"); empty:
	// the cluster's default.
	RuntimeClass string
	// CPURequest is the pod's CPU request, capped at its CPU limit; nil:
	// a tenth of that limit.
	CPURequest *resource.Quantity
}

// Pod returns the pod a sandbox is made as, hardened as
// backend.HardeningFor says (podSecurity, containerSecurity, podVolumes;
// hardening_test.go reads it back): the sandbox user with runAsNonRoot, a
// read-only root filesystem, every capability dropped, no privilege
// escalation, seccomp RuntimeDefault, no service account token or service
// links, no host namespaces or paths, memory-backed size-capped emptyDirs
// for /workspace and /tmp, CPU, memory and ephemeral-storage limits, never
// restarted. The network is the NetworkPolicy's (policyFor). What a pod
// cannot set is the node's: the pids limit (the kubelet's podPidsLimit),
// ulimits, the OOM score, swap, init and logs. A spec Pod cannot honour is
// an error, never a weaker pod.
func Pod(spec backend.ContainerSpec, opts Options) (*corev1.Pod, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	h, err := backend.HardeningFor(spec)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	limits := podLimits(h)
	labels, annotations := splitLabels(spec.Labels)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: spec.Name, Namespace: opts.Namespace,
			Labels: labels, Annotations: annotations,
		},
		Spec: podSecurity(h),
	}
	pod.Spec.Hostname = "sandbox"
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
	pod.Spec.Containers = []corev1.Container{{
		Name:            ContainerName,
		Image:           spec.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         keepAlive,
		Env:             envVars(spec.Env),
		WorkingDir:      backend.Workspace,
		Resources:       corev1.ResourceRequirements{Limits: limits, Requests: requestsFor(limits, opts.CPURequest)},
		SecurityContext: containerSecurity(h),
	}}
	podVolumes(&pod.Spec, h)
	if opts.RuntimeClass != "" {
		pod.Spec.RuntimeClassName = ptr(opts.RuntimeClass)
	}
	return pod, nil
}

// podSecurity is the pod-level part of h: its user, seccomp, no host
// namespaces, no service account token or service links, never restarted.
func podSecurity(h backend.Hardening) corev1.PodSpec {
	no := !h.NoHostAccess
	return corev1.PodSpec{
		RestartPolicy:                restartPolicy(h),
		AutomountServiceAccountToken: &no,
		EnableServiceLinks:           &no,
		HostNetwork:                  no,
		HostPID:                      no,
		HostIPC:                      no,
		ShareProcessNamespace:        &no,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsUser: &h.UID, RunAsGroup: &h.GID, FSGroup: &h.GID,
			RunAsNonRoot:   ptr(h.UID > 0),
			SeccompProfile: seccomp(h),
		},
	}
}

// containerSecurity is the container-level part of h.
func containerSecurity(h backend.Hardening) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{
		RunAsUser: &h.UID, RunAsGroup: &h.GID,
		RunAsNonRoot:             ptr(h.UID > 0),
		ReadOnlyRootFilesystem:   ptr(h.ReadOnlyRoot),
		AllowPrivilegeEscalation: ptr(!h.NoNewPrivileges),
		Privileged:               ptr(!h.NoHostAccess),
		SeccompProfile:           seccomp(h),
	}
	if h.DropAllCaps {
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
	return sc
}

func seccomp(h backend.Hardening) *corev1.SeccompProfile {
	if !h.DefaultSeccomp {
		return nil
	}
	return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
}

func restartPolicy(h backend.Hardening) corev1.RestartPolicy {
	if h.NeverRestart {
		return corev1.RestartPolicyNever
	}
	return corev1.RestartPolicyOnFailure
}

// podVolumes gives the pod's container its only writable places: the
// workspace and /tmp, memory-backed and size-capped, owned by the sandbox
// user through the pod's fsGroup.
func podVolumes(ps *corev1.PodSpec, h backend.Hardening) {
	ps.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "workspace", MountPath: backend.Workspace},
		{Name: "tmp", MountPath: "/tmp"},
	}
	ps.Volumes = []corev1.Volume{
		memoryVolume("workspace", h.WorkspaceMB),
		memoryVolume("tmp", h.TmpMB),
	}
}

// isolatingPolicy is the NetworkPolicy name in namespace ns, labelled
// labels, for the pods selector matches: no ingress, and egress to every
// destination when egress is set, none otherwise. A sandbox's (DenyAll,
// EgressPolicy), a helper's (helperPolicy) and a warm pool's
// (ensureDenyAll) are all of this kind.
func isolatingPolicy(name, ns string, labels, selector map[string]string, egress bool) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	if egress {
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{}} // an empty rule: every destination
	}
	return np
}

// DenyAll returns the NetworkPolicy that every sandbox pod gets: no
// ingress and no egress, selected by the sandbox id label. (Only a
// policy-enforcing network plugin enforces it; the pod has no other opening.)
// It carries the pod's labels (the owner's among them), so that a policy
// whose pod was never made (its server died between the two) is found by
// the owner sweep (RemoveOrphanVolumes).
func DenyAll(pod *corev1.Pod) *networkingv1.NetworkPolicy { return sandboxPolicy(pod, false) }

// EgressPolicy returns the NetworkPolicy of a sandbox made with network
// "egress" (which the engine allows only with network.allow_egress on): no
// ingress, and egress to every destination, selected and labelled as
// DenyAll's is. Sandboxes in "none" and "allowlist" get DenyAll: the
// allowlist's connections ride the agent's stream, not the pod network.
func EgressPolicy(pod *corev1.Pod) *networkingv1.NetworkPolicy { return sandboxPolicy(pod, true) }

// sandboxPolicy is DenyAll, or EgressPolicy with egress.
func sandboxPolicy(pod *corev1.Pod, egress bool) *networkingv1.NetworkPolicy {
	labels := maps.Clone(pod.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[backend.LabelManaged] = "true"
	return isolatingPolicy(pod.Name, pod.Namespace, labels, map[string]string{backend.LabelID: pod.Labels[backend.LabelID]}, egress)
}

// policyFor is the NetworkPolicy a sandbox pod of network n gets.
func policyFor(pod *corev1.Pod, n string) *networkingv1.NetworkPolicy {
	return sandboxPolicy(pod, n == "egress")
}

// checkSpec refuses what a pod cannot carry as the Docker backend does.
func checkSpec(spec backend.ContainerSpec) error {
	switch {
	case spec.Network != "" && spec.Network != "none" && spec.Network != "allowlist" && spec.Network != "egress":
		return fmt.Errorf("kubernetes: network %q is none of none, allowlist or egress", spec.Network)
	case spec.CacheUser != "":
		return fmt.Errorf("kubernetes: an install cache is not yet available")
	case !dnsLabel.MatchString(spec.Name):
		return fmt.Errorf("kubernetes: sandbox name %q is not a DNS label", spec.Name)
	case spec.Labels[backend.LabelID] == "" || !labelValue.MatchString(spec.Labels[backend.LabelID]):
		return fmt.Errorf("kubernetes: sandbox id label %q is missing or not a label value", spec.Labels[backend.LabelID])
	case spec.WorkspaceMB <= 0:
		return fmt.Errorf("kubernetes: the workspace needs a size")
	case spec.MemoryBytes <= 0 || spec.NanoCPUs <= 0:
		return fmt.Errorf("kubernetes: memory and CPU limits are required")
	}
	return nil
}

var (
	dnsLabel   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	labelValue = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

// podLimits turns the spec's limits into the container's: CPU, memory, and
// ephemeral storage (the writable layer and logs; the memory-backed volumes
// count against memory).
func podLimits(h backend.Hardening) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(max(h.NanoCPUs/1_000_000, 1), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(h.MemoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse(EphemeralStorage),
	}
}

// podRequests is what the scheduler reserves for a sandbox: its memory
// and storage limits, and a tenth of its CPU limit. A sandbox's CPU
// limit is a cap, as on Docker, not a reservation: reserving it whole
// would let a few idle sandboxes fill a node.
func podRequests(limits corev1.ResourceList) corev1.ResourceList {
	req := limits.DeepCopy()
	cpu := limits[corev1.ResourceCPU]
	req[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(cpu.MilliValue()/10, 1), resource.DecimalSI)
	return req
}

// requestsFor is podRequests with the CPU request cpu
// (kubernetes.cpu_request) when not nil, at most the CPU limit
// (Kubernetes refuses a request above it).
func requestsFor(limits corev1.ResourceList, cpu *resource.Quantity) corev1.ResourceList {
	req := podRequests(limits)
	if cpu != nil {
		limit := limits[corev1.ResourceCPU]
		req[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(min(cpu.MilliValue(), limit.MilliValue()), 1), resource.DecimalSI)
	}
	return req
}

// ParseCPURequest reads kubernetes.cpu_request: nil for "" (a tenth of
// each pod's CPU limit).
func ParseCPURequest(s string) (*resource.Quantity, error) {
	if s == "" {
		return nil, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.MilliValue() < 1 {
		return nil, fmt.Errorf("kubernetes: cpu_request %q is not a CPU quantity: write millicores (\"50m\") or cores (\"0.25\"), more than 0", s)
	}
	return &q, nil
}

// EphemeralStorage caps what a sandbox may write outside its memory-backed
// volumes (its root is read-only, so this is only its logs).
const EphemeralStorage = "64Mi"

// memoryVolume is a tmpfs emptyDir of mb MiB.
func memoryVolume(name string, mb int) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium:    corev1.StorageMediumMemory,
		SizeLimit: resource.NewQuantity(int64(mb)<<20, resource.BinarySI),
	}}}
}

// splitLabels keeps every contract label as an annotation with its exact
// value, and as a label too when Kubernetes accepts the value (selectors
// and List use those).
func splitLabels(in map[string]string) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	for k, v := range in {
		annotations[k] = v
		if labelValue.MatchString(v) {
			labels[k] = v
		}
	}
	return labels, annotations
}

func envVars(env []string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, corev1.EnvVar{Name: k, Value: v})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
