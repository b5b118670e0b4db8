package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// labelExpiresAt is the engine's creation-time expiry label (package
// sandbox's LabelExpiresAt): the cluster ends the sandbox then even when
// no server is left to do it.
const labelExpiresAt = "io.mcp-sandbox.expires-at"

// startTimeout bounds how long Create waits for a new pod to run.
const startTimeout = 2 * time.Minute

// wrap names what failed; nil stays nil.
func (b *Backend) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("kubernetes: %s: %w", what, err)
}

// Create claims the sandbox from its language's warm pool (Config.WarmPool,
// with agent-sandbox's extensions: createClaimed), or makes its deny-all
// NetworkPolicy, then its pod (as an agent-sandbox Sandbox, or a plain
// pod: see Config.UseAgentSandbox), and waits until the pod runs. Its id is the Kubernetes name of both. A pod
// that cannot start is an error naming why, and is removed.
func (b *Backend) Create(ctx context.Context, spec backend.ContainerSpec) (string, error) {
	pod, err := b.podFor(ctx, spec)
	if err != nil {
		return "", err
	}
	expires, hasExpiry, err := expiry(spec.Labels)
	if err != nil {
		return "", err
	}
	useSandbox, err := b.useAgentSandbox()
	if err != nil {
		return "", err
	}
	network := networkOf(spec.Network)
	// A warm pool's pods are the deny-all kind: an egress sandbox is made
	// on its own.
	if useSandbox && network != "egress" {
		at := expires
		if !hasExpiry {
			at = time.Now().Add(24 * time.Hour)
		}
		id, err := b.createClaimed(ctx, pod, at)
		if !errors.Is(err, errNoWarmPool) {
			return id, err
		}
	}
	np, err := b.cs.policies(b.namespace).Create(ctx, policyFor(pod, network), metav1.CreateOptions{})
	if err != nil {
		return "", b.wrap("create network policy "+pod.Name, err)
	}
	id := pod.Name
	owner, err := b.createPodOrSandbox(ctx, pod, useSandbox, expires, hasExpiry)
	if err == nil {
		err = b.ownPolicy(ctx, np.Name, owner)
	}
	if err == nil {
		err = b.waitStarted(ctx, id)
	}
	if err == nil && network == "egress" {
		err = b.checkHasNetwork(ctx, id, pod)
	}
	if err != nil {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if rerr := b.Remove(cctx, id); rerr != nil {
			b.log.Warn("remove a sandbox that did not start", "id", id, "err", rerr)
		}
		return "", err
	}
	return id, nil
}

// podFor is the hardened pod for spec, with the backend's annotations and
// the image's pull policy.
func (b *Backend) podFor(ctx context.Context, spec backend.ContainerSpec) (*corev1.Pod, error) {
	class, handler, err := b.runtimeClass(ctx, spec.Runtime)
	if err != nil {
		return nil, err
	}
	s := spec
	s.Name = objectName(spec.Name)
	// The install cache is a volume the sandbox's helpers share; pods
	// cannot share an emptyDir, so a Kubernetes helper gets an empty cache
	// of its own (HelperPod) and the sandbox none.
	s.CacheUser = ""
	s.Labels = maps.Clone(spec.Labels)
	cpu, err := ParseCPURequest(b.cfg.CPURequest)
	if err != nil {
		return nil, err
	}
	pod, err := Pod(s, Options{Namespace: b.namespace, RuntimeClass: class, CPURequest: cpu})
	if err != nil {
		return nil, err
	}
	uid, gid, _ := backend.ParseUser(spec.User)
	pod.Annotations[AnnotationName] = spec.Name
	pod.Annotations[AnnotationNetwork] = networkOf(spec.Network)
	pod.Annotations[AnnotationPids] = strconv.FormatInt(spec.Pids, 10)
	pod.Annotations[AnnotationRuntime] = handler
	pod.Annotations[AnnotationUser] = fmt.Sprintf("%d:%d", uid, gid)
	pod.Spec.Containers[0].ImagePullPolicy = b.pullPolicy(spec.Image)
	return pod, nil
}

func networkOf(n string) string {
	if n == "" {
		return "none"
	}
	return n
}

// expiry reads the expires-at label.
func expiry(labels map[string]string) (time.Time, bool, error) {
	v, ok := labels[labelExpiresAt]
	if !ok || v == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("kubernetes: label %s %q: %w", labelExpiresAt, v, err)
	}
	return t, true, nil
}

// useAgentSandbox decides, once per backend, whether sandboxes are
// agent-sandbox Sandbox objects.
func (b *Backend) useAgentSandbox() (bool, error) {
	mode := b.cfg.UseAgentSandbox
	if mode == "never" {
		return false, nil
	}
	b.discoverOnce.Do(func() { b.sandboxGVR, b.discoverErr = DiscoverAgentSandbox(b.cs.disc) })
	switch {
	case b.discoverErr == nil:
		return true, nil
	case mode == "always":
		return false, fmt.Errorf("kubernetes: use_agent_sandbox = \"always\": %w", b.discoverErr)
	case errors.Is(b.discoverErr, ErrNoAgentSandbox):
		return false, nil
	}
	return false, b.discoverErr
}

// createPodOrSandbox makes the pod, itself or through a Sandbox, ended by
// the cluster at expires, and returns the object that owns the pod.
func (b *Backend) createPodOrSandbox(ctx context.Context, pod *corev1.Pod, useSandbox bool, expires time.Time, hasExpiry bool) (metav1.OwnerReference, error) {
	if !useSandbox {
		if hasExpiry {
			pod.Spec.ActiveDeadlineSeconds = ptr(max(int64(time.Until(expires).Seconds()), 1))
		}
		p, err := b.cs.pods(b.namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return metav1.OwnerReference{}, b.wrap("create pod "+pod.Name, err)
		}
		return metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}, nil
	}
	pod.Annotations[AnnotationAgentSandbox] = "true"
	if !hasExpiry {
		// A Sandbox without shutdownTime lives until deleted: the engine
		// always sets the label, so only a direct caller gets here.
		expires = time.Now().Add(24 * time.Hour)
	}
	sb, err := AgentSandbox(b.sandboxGVR, pod, b.leased(expires))
	if err != nil {
		return metav1.OwnerReference{}, err
	}
	u, err := b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Create(ctx, sb, metav1.CreateOptions{})
	if err != nil {
		return metav1.OwnerReference{}, b.wrap("create Sandbox "+pod.Name, err)
	}
	b.holdLease(pod.Name, expires)
	return metav1.OwnerReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), UID: u.GetUID()}, nil
}

// ownPolicy makes the sandbox's NetworkPolicy belong to the object that
// owns its pod, so the cluster's garbage collector removes it with the
// sandbox when the cluster ends it (expiry) without a server.
func (b *Backend) ownPolicy(ctx context.Context, name string, owner metav1.OwnerReference) error {
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":%q,"kind":%q,"name":%q,"uid":%q}]}}`,
		owner.APIVersion, owner.Kind, owner.Name, owner.UID)
	_, err := b.cs.policies(b.namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return b.wrap("own network policy "+name, err)
}

// waitStarted polls the pod until it runs; a pod that cannot start is an
// error naming why (from its status, else its latest warning event).
func (b *Backend) waitStarted(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		pod, err := b.cs.pods(b.namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			if running(pod) {
				return nil
			}
			if why := cannotStart(pod); why != "" {
				return fmt.Errorf("kubernetes: sandbox pod %s cannot start: %s", name, why)
			}
		case !apierrors.IsNotFound(err) && ctx.Err() == nil:
			return b.wrap("get pod "+name, err)
		}
		select {
		case <-ctx.Done():
			why := b.lastWarning(context.WithoutCancel(ctx), name)
			if pod != nil && why == "" {
				why = fmt.Sprintf("phase %s", pod.Status.Phase)
			}
			return fmt.Errorf("kubernetes: sandbox pod %s not running after %s (%s): %w", name, startTimeout, why, ctx.Err())
		case <-tick.C:
		}
	}
}

// running reports whether the pod's sandbox container runs.
func running(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == ContainerName {
			return c.State.Running != nil
		}
	}
	return false
}

// fatalWaiting are the container waiting reasons that do not resolve by
// waiting.
var fatalWaiting = map[string]bool{
	"ErrImageNeverPull": true, "ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
	"CrashLoopBackOff": true,
}

// cannotStart says why a pod will never run, or "".
func cannotStart(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return "it is being deleted"
	}
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return fmt.Sprintf("it ended (%s): %s %s", pod.Status.Phase, pod.Status.Reason, pod.Status.Message)
	}
	for _, c := range pod.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil && fatalWaiting[w.Reason] {
			return w.Reason + ": " + w.Message
		}
		if t := c.State.Terminated; t != nil {
			return fmt.Sprintf("its container ended (%s, exit %d): %s", t.Reason, t.ExitCode, t.Message)
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
			time.Since(c.LastTransitionTime.Time) > 10*time.Second {
			return "unschedulable: " + c.Message
		}
	}
	return ""
}

// lastWarning is the message of the pod's latest warning event, or "".
func (b *Backend) lastWarning(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	evs, err := b.cs.events(b.namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + name,
	})
	if err != nil {
		return ""
	}
	var last *corev1.Event
	for i := range evs.Items {
		e := &evs.Items[i]
		if e.Type == corev1.EventTypeWarning && (last == nil || e.LastTimestamp.After(last.LastTimestamp.Time)) {
			last = e
		}
	}
	if last == nil {
		return ""
	}
	return last.Reason + ": " + last.Message
}

// cleanupContext returns a context for clean-up work that must happen even
// though ctx was cancelled, bounded so it cannot hang.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

// checkHasNetwork fails an egress sandbox whose pod has no network
// interface but loopback: a RuntimeClass whose handler gives pods none
// (gVisor run with --network=none, as on the CI cluster) cannot honour
// egress, and the explicit choice fails rather than silently giving a
// sandbox without the network it asked for. The pod runs nothing of the
// sandbox's yet, so what it says is the runtime's.
func (b *Backend) checkHasNetwork(ctx context.Context, id string, pod *corev1.Pod) error {
	var out bytes.Buffer
	_, err := b.Exec(ctx, id, backend.ExecSpec{
		Cmd: []string{"/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1"}, Stdout: &backend.LimitedBuffer{B: &out, N: 4096}, Stderr: &backend.LimitedBuffer{B: &bytes.Buffer{}, N: 256},
	})
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(out.String()) {
		if f != "lo" {
			return nil
		}
	}
	class := "the cluster's default"
	if c := pod.Spec.RuntimeClassName; c != nil {
		class = "RuntimeClass " + strconv.Quote(*c)
	}
	return fmt.Errorf("kubernetes: network \"egress\": the pod has no network interface but loopback: its runtime (%s) gives pods none, so this cluster cannot give a sandbox egress; use another runtime_class, or network \"allowlist\"", class)
}
