package kubernetes

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// hardeningItem is one hardening default and how to see it on a pod (as
// built, or as the API server stored it) and its NetworkPolicy.
type hardeningItem struct {
	name  string
	check func(p *corev1.Pod, np *networkingv1.NetworkPolicy, spec backend.ContainerSpec) bool
	// breakIt removes the item from a pod or policy, so the test can see
	// that check fails without it.
	breakIt func(p *corev1.Pod, np *networkingv1.NetworkPolicy)
}

func box(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

func volume(p *corev1.Pod, mountPath string) *corev1.Volume {
	for _, m := range box(p).VolumeMounts {
		if m.MountPath == mountPath {
			for i := range p.Spec.Volumes {
				if p.Spec.Volumes[i].Name == m.Name {
					return &p.Spec.Volumes[i]
				}
			}
		}
	}
	return nil
}

func memoryDir(p *corev1.Pod, mountPath string, mb int) bool {
	v := volume(p, mountPath)
	if v == nil || v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory || v.EmptyDir.SizeLimit == nil {
		return false
	}
	return v.EmptyDir.SizeLimit.Value() == int64(mb)<<20
}

func limit(p *corev1.Pod, name corev1.ResourceName, want resource.Quantity) bool {
	q, ok := box(p).Resources.Limits[name]
	return ok && q.Cmp(want) == 0
}

// hardeningItems lists every hardening default of a sandbox pod.
var hardeningItems = []hardeningItem{
	{"non-root user",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			sc := box(p).SecurityContext
			return sc != nil && sc.RunAsUser != nil && *sc.RunAsUser > 0 &&
				p.Spec.SecurityContext != nil && p.Spec.SecurityContext.RunAsUser != nil && *p.Spec.SecurityContext.RunAsUser > 0
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { box(p).SecurityContext.RunAsUser = ptr(int64(0)) }},
	{"runAsNonRoot",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return isTrue(box(p).SecurityContext.RunAsNonRoot) && isTrue(p.Spec.SecurityContext.RunAsNonRoot)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { box(p).SecurityContext.RunAsNonRoot = nil }},
	{"readOnlyRootFilesystem",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return isTrue(box(p).SecurityContext.ReadOnlyRootFilesystem)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) {
			box(p).SecurityContext.ReadOnlyRootFilesystem = ptr(false)
		}},
	{"capabilities drop ALL, add none",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			c := box(p).SecurityContext.Capabilities
			return c != nil && slices.Equal(c.Drop, []corev1.Capability{"ALL"}) && len(c.Add) == 0
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) {
			box(p).SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
		}},
	{"allowPrivilegeEscalation false, not privileged",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			sc := box(p).SecurityContext
			return isFalse(sc.AllowPrivilegeEscalation) && !isTrue(sc.Privileged)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) {
			box(p).SecurityContext.AllowPrivilegeEscalation = nil
		}},
	{"seccomp RuntimeDefault",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			sp := box(p).SecurityContext.SeccompProfile
			return sp != nil && sp.Type == corev1.SeccompProfileTypeRuntimeDefault
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) {
			box(p).SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}},
	{"automountServiceAccountToken false",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return isFalse(p.Spec.AutomountServiceAccountToken)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { p.Spec.AutomountServiceAccountToken = nil }},
	{"enableServiceLinks false",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return isFalse(p.Spec.EnableServiceLinks)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { p.Spec.EnableServiceLinks = ptr(true) }},
	{"no host namespaces",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return !p.Spec.HostNetwork && !p.Spec.HostPID && !p.Spec.HostIPC && !isTrue(p.Spec.ShareProcessNamespace)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { p.Spec.HostPID = true }},
	{"no host paths, only the two memory volumes",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			for _, v := range p.Spec.Volumes {
				if v.EmptyDir == nil {
					return false
				}
			}
			return len(p.Spec.Volumes) == 2 && len(box(p).VolumeMounts) == 2
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host",
				VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}},
	{"/workspace: emptyDir, medium Memory, sizeLimit",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, spec backend.ContainerSpec) bool {
			return memoryDir(p, backend.Workspace, spec.WorkspaceMB)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { volume(p, backend.Workspace).EmptyDir.Medium = "" }},
	{"/tmp: emptyDir, medium Memory, sizeLimit",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, spec backend.ContainerSpec) bool {
			return memoryDir(p, "/tmp", hardeningOf(spec).TmpMB)
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { volume(p, "/tmp").EmptyDir.SizeLimit = nil }},
	{"limits: cpu, memory, ephemeral-storage",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, spec backend.ContainerSpec) bool {
			return limit(p, corev1.ResourceCPU, *resource.NewMilliQuantity(spec.NanoCPUs/1_000_000, resource.DecimalSI)) &&
				limit(p, corev1.ResourceMemory, *resource.NewQuantity(spec.MemoryBytes, resource.BinarySI)) &&
				limit(p, corev1.ResourceEphemeralStorage, resource.MustParse(EphemeralStorage))
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) {
			delete(box(p).Resources.Limits, corev1.ResourceEphemeralStorage)
		}},
	{"never restarted",
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return p.Spec.RestartPolicy == corev1.RestartPolicyNever
		},
		func(p *corev1.Pod, _ *networkingv1.NetworkPolicy) { p.Spec.RestartPolicy = corev1.RestartPolicyAlways }},
	{"deny-all NetworkPolicy (ingress and egress) selecting the pod",
		func(p *corev1.Pod, np *networkingv1.NetworkPolicy, _ backend.ContainerSpec) bool {
			return isDenyAll(p, np)
		},
		func(_ *corev1.Pod, np *networkingv1.NetworkPolicy) {
			np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{}}
		}},
}

// hardeningProblems names the hardening items p and np lack.
func hardeningProblems(p *corev1.Pod, np *networkingv1.NetworkPolicy, spec backend.ContainerSpec) []string {
	var out []string
	if len(p.Spec.Containers) != 1 || len(p.Spec.InitContainers) != 0 || len(p.Spec.EphemeralContainers) != 0 {
		return []string{fmt.Sprintf("want one container, got %d (+%d init)", len(p.Spec.Containers), len(p.Spec.InitContainers))}
	}
	if box(p).SecurityContext == nil || p.Spec.SecurityContext == nil {
		return []string{"no security context"}
	}
	for _, it := range hardeningItems {
		if !it.check(p, np, spec) {
			out = append(out, it.name)
		}
	}
	return out
}

func hardeningOf(spec backend.ContainerSpec) backend.Hardening {
	h, err := backend.HardeningFor(spec)
	if err != nil {
		panic(err)
	}
	return h
}

// notOnAPod are the rules of backend.Hardening a pod cannot carry, and
// whose they are instead.
var notOnAPod = map[string]string{
	"Pids":        "the node's: the kubelet's podPidsLimit",
	"NofileSoft":  "the node's container runtime's",
	"NofileHard":  "the node's container runtime's",
	"NoCoreDumps": "the node's container runtime's",
	"OOMScoreAdj": "the kubelet's, by the pod's QoS class",
	"NoSwap":      "the node's: the kubelet's swap behaviour (none unless configured)",
	"Init":        "a pod has no init option",
	"NoLogs":      "the kubelet's (the main process prints nothing)",
	"Runtime":     "the RuntimeClass, which podFor resolves against the cluster and Pod takes in Options",
}

// readPod reads a pod and its NetworkPolicy back into the hardening they
// carry: each field is set only when every part of its rule is there.
func readPod(p *corev1.Pod, np *networkingv1.NetworkPolicy) backend.Hardening {
	var h backend.Hardening
	if len(p.Spec.Containers) != 1 || len(p.Spec.InitContainers) != 0 || box(p).SecurityContext == nil || p.Spec.SecurityContext == nil {
		return h
	}
	sc, psc := box(p).SecurityContext, p.Spec.SecurityContext
	if same(sc.RunAsUser, psc.RunAsUser) && isTrue(sc.RunAsNonRoot) && isTrue(psc.RunAsNonRoot) {
		h.UID = *sc.RunAsUser
	}
	if same(sc.RunAsGroup, psc.RunAsGroup) && same(psc.FSGroup, psc.RunAsGroup) {
		h.GID = *sc.RunAsGroup
	}
	h.Egress = !isDenyAll(p, np) || p.Spec.HostNetwork
	h.ReadOnlyRoot = isTrue(sc.ReadOnlyRootFilesystem)
	h.NoNewPrivileges = isFalse(sc.AllowPrivilegeEscalation)
	h.DropAllCaps = sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(sc.Capabilities.Add) == 0
	h.DefaultSeccomp = runtimeDefault(sc.SeccompProfile) && runtimeDefault(psc.SeccompProfile)
	h.NoHostAccess = !isTrue(sc.Privileged) && !p.Spec.HostNetwork && !p.Spec.HostPID && !p.Spec.HostIPC &&
		!isTrue(p.Spec.ShareProcessNamespace) && isFalse(p.Spec.AutomountServiceAccountToken) &&
		isFalse(p.Spec.EnableServiceLinks) && onlyEmptyDirs(p)
	h.NeverRestart = p.Spec.RestartPolicy == corev1.RestartPolicyNever
	h.WorkspaceMB, h.TmpMB = memoryMB(p, backend.Workspace), memoryMB(p, "/tmp")
	lim := box(p).Resources.Limits
	if eph, ok := lim[corev1.ResourceEphemeralStorage]; ok && eph.Cmp(resource.MustParse(EphemeralStorage)) == 0 {
		h.MemoryBytes = lim.Memory().Value()
		h.NanoCPUs = lim.Cpu().MilliValue() * 1_000_000
	}
	return h
}

func same(a, b *int64) bool { return a != nil && b != nil && *a == *b }

func runtimeDefault(sp *corev1.SeccompProfile) bool {
	return sp != nil && sp.Type == corev1.SeccompProfileTypeRuntimeDefault
}

func onlyEmptyDirs(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir == nil {
			return false
		}
	}
	return true
}

// isDenyAll: np selects p by one label of its own (a sandbox's id, a
// helper's name) and lets nothing in or out.
func isDenyAll(p *corev1.Pod, np *networkingv1.NetworkPolicy) bool {
	sel := np.Spec.PodSelector.MatchLabels
	own := sel[backend.LabelID] == p.Labels[backend.LabelID] && p.Labels[backend.LabelID] != "" ||
		sel[LabelHelperPod] == p.Name && p.Labels[LabelHelperPod] == p.Name ||
		sel[LabelWarmPool] == p.Labels[LabelWarmPool] && p.Labels[LabelWarmPool] != "" // the pool's own
	return np.Namespace == p.Namespace && len(sel) == 1 && own &&
		len(np.Spec.PodSelector.MatchExpressions) == 0 &&
		slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) &&
		slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) &&
		len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0
}

// memoryMB is the size of the memory-backed emptyDir mounted at
// mountPath, 0 when it is not one.
func memoryMB(p *corev1.Pod, mountPath string) int {
	v := volume(p, mountPath)
	if v == nil || v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory || v.EmptyDir.SizeLimit == nil {
		return 0
	}
	return int(v.EmptyDir.SizeLimit.Value() >> 20)
}
