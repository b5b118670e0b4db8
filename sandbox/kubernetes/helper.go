package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// LabelHelperPod is the label of an install helper pod whose value is the
// pod's own name: its NetworkPolicy selects it, and no sandbox pod has it.
const LabelHelperPod = "k8s.mcp-sandbox.io/helper-pod"

// helperTmpMB is a helper's /tmp, as on Docker.
const helperTmpMB = 256

// helperDeadline is a helper pod's activeDeadlineSeconds when ctx has no
// deadline; with one, the helper ends a minute after it. It is the
// backstop for a helper whose server died before removing it (its
// ownerReference to the sandbox's pod is the other).
const helperDeadline = time.Hour

// HelperPod returns the helper pod and its NetworkPolicy that RunHelper
// makes, named name, for the sandbox pod sandbox: the sandbox's hardening
// (Pod, from spec's image, user, environment and limits, with a fresh
// memory-backed workspace of spec.WorkspaceMB and /tmp), the sandbox's
// RuntimeClass, spec's labels, an empty memory-backed emptyDir at
// spec.CacheDir (no volume is shared across pods, so no download cache
// outlives one install), an ownerReference to the sandbox pod (the
// cluster removes the helper with its sandbox) and activeDeadlineSeconds
// deadline. The policy selects the helper pod alone (LabelHelperPod):
// ingress is denied, and egress to anywhere is allowed when spec.Network
// is "egress", denied for "none". The policy belongs to the sandbox's pod
// until RunHelper hands it to the helper pod, once that exists.
func HelperPod(sandbox *corev1.Pod, spec backend.HelperSpec, name string, deadline time.Duration) (*corev1.Pod, *networkingv1.NetworkPolicy, error) {
	if len(spec.Cmd) == 0 {
		return nil, nil, errors.New("kubernetes: helper: empty command")
	}
	if spec.Network != "none" && spec.Network != "egress" {
		return nil, nil, fmt.Errorf("kubernetes: helper network %q is neither none nor egress", spec.Network)
	}
	if spec.CacheDir != "" && (!path.IsAbs(spec.CacheDir) || path.Clean(spec.CacheDir) == "/" ||
		path.Clean(spec.CacheDir) == backend.Workspace || path.Clean(spec.CacheDir) == "/tmp") {
		return nil, nil, fmt.Errorf("kubernetes: helper cache directory %q is not a directory of its own", spec.CacheDir)
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelHelperPod] = name
	pod, err := Pod(backend.ContainerSpec{
		Name: name, Image: spec.Image, Labels: labels, Env: spec.Env, User: spec.User, Network: "none",
		MemoryBytes: spec.MemoryBytes, NanoCPUs: spec.NanoCPUs, Pids: spec.Pids,
		WorkspaceMB: spec.WorkspaceMB, TmpMB: helperTmpMB,
	}, Options{Namespace: sandbox.Namespace, CPURequest: sandbox.Spec.Containers[0].Resources.Requests.Cpu()})
	if err != nil {
		return nil, nil, err
	}
	uid, gid, _ := backend.ParseUser(spec.User)
	pod.Spec.Hostname = "helper"
	pod.Spec.RuntimeClassName = sandbox.Spec.RuntimeClassName
	pod.Spec.ActiveDeadlineSeconds = ptr(max(int64(deadline.Seconds()), 1))
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: sandbox.Name, UID: sandbox.UID}}
	pod.Annotations[AnnotationName] = name
	pod.Annotations[AnnotationNetwork] = spec.Network
	pod.Annotations[AnnotationPids] = fmt.Sprint(spec.Pids)
	pod.Annotations[AnnotationRuntime] = sandbox.Annotations[AnnotationRuntime]
	pod.Annotations[AnnotationUser] = fmt.Sprintf("%d:%d", uid, gid)
	if spec.CacheDir != "" {
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "cache", MountPath: path.Clean(spec.CacheDir)})
		pod.Spec.Volumes = append(pod.Spec.Volumes, memoryVolume("cache", spec.WorkspaceMB))
	}
	np := helperPolicy(pod, spec.Network == "egress")
	// Until the helper pod exists to own it, the policy belongs to the
	// sandbox's pod, so that it never outlives both.
	np.OwnerReferences = pod.OwnerReferences
	return pod, np, nil
}

// helperPolicy is a helper pod's NetworkPolicy: it selects that pod alone,
// denies ingress, and allows egress to every destination when egress is
// set (the install's network, as a Docker helper's), none otherwise.
func helperPolicy(pod *corev1.Pod, egress bool) *networkingv1.NetworkPolicy {
	return isolatingPolicy(pod.Name, pod.Namespace,
		map[string]string{backend.LabelManaged: "true", LabelHelperPod: pod.Name},
		map[string]string{LabelHelperPod: pod.Name}, egress)
}

// RunHelper runs spec in a helper pod of its own (HelperPod): never the
// sandbox's pod, which never gets a network, and never with the sandbox's
// files, so nothing the sandbox's code wrote can run or steer an
// installer that has the network. The pod idles while spec.Cmd runs as an
// exec (its output streamed to spec.Stdout and spec.Stderr; ctx ending
// kills it); after a zero exit, a tar of spec.Collect (entries named from
// its base name down) streams to spec.Into. The pod and its policy are
// deleted before RunHelper returns, on every path.
func (b *Backend) RunHelper(ctx context.Context, containerID string, spec backend.HelperSpec) (status backend.ExecStatus, err error) {
	if len(spec.Cmd) == 0 {
		return status, errors.New("kubernetes: helper: empty command")
	}
	if !dnsLabel.MatchString(containerID) {
		return status, fmt.Errorf("kubernetes: no sandbox pod %q", containerID)
	}
	sandbox, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
	if err != nil {
		return status, b.wrap("get the sandbox pod "+containerID, err)
	}
	deadline := helperDeadline
	if d, ok := ctx.Deadline(); ok {
		deadline = time.Until(d) + time.Minute
	}
	name := backend.NamePrefix + "helper-" + randomHex(6)
	pod, np, err := HelperPod(sandbox, spec, name, deadline)
	if err != nil {
		return status, err
	}
	pod.Spec.Containers[0].ImagePullPolicy = b.pullPolicy(spec.Image)
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if rerr := b.Remove(cctx, name); rerr != nil {
			err = errors.Join(err, fmt.Errorf("kubernetes: remove helper: %w", rerr))
		}
	}()
	if err := b.startHelper(ctx, pod, np); err != nil {
		return status, err
	}
	if spec.Started != nil {
		stop, err := spec.Started(ctx, name)
		if err != nil {
			return status, err
		}
		defer stop()
	}
	status, err = b.Exec(ctx, name, backend.ExecSpec{
		Cmd: spec.Cmd, Env: spec.Env, User: spec.User, WorkDir: backend.Workspace,
		Stdout: backend.OrDiscard(spec.Stdout), Stderr: backend.OrDiscard(spec.Stderr),
	})
	if err != nil || status.ExitCode != 0 || spec.Collect == "" || spec.Into == nil {
		return status, err
	}
	return status, b.collect(ctx, name, spec)
}

// startHelper makes the helper's policy (first, so the pod never runs
// unselected by it), then the pod, hands the policy to the pod, and waits
// until the pod runs.
func (b *Backend) startHelper(ctx context.Context, pod *corev1.Pod, np *networkingv1.NetworkPolicy) error {
	if _, err := b.cs.policies(b.namespace).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		return b.wrap("create helper network policy "+np.Name, err)
	}
	p, err := b.cs.pods(b.namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return b.wrap("create helper pod "+pod.Name, err)
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}
	if err := b.ownPolicy(ctx, np.Name, owner); err != nil {
		return err
	}
	return b.waitStarted(ctx, pod.Name)
}

// collect streams a tar of spec.Collect in the helper's workspace to
// spec.Into; the stream is the helper's and hostile (Into is the fence),
// and is piped, never held whole.
func (b *Backend) collect(ctx context.Context, name string, spec backend.HelperSpec) error {
	p := path.Join(backend.Workspace, spec.Collect)
	if _, err := b.StatPath(ctx, name, p); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the installer left no %s: %w", spec.Collect, fs.ErrNotExist)
	} else if err != nil {
		return err
	}
	rc, err := b.CopyFrom(ctx, name, p)
	if err != nil {
		return b.wrap("copy from the helper", err)
	}
	defer rc.Close()
	if err := spec.Into(rc); err != nil {
		return err
	}
	return nil
}
