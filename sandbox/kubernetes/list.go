package kubernetes

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.Inspector = (*Backend)(nil)

// contractPrefix starts every contract label's key.
const contractPrefix = "io.mcp-sandbox."

// List returns the sandbox pods of the namespace (label
// io.mcp-sandbox.managed), with their contract labels as the engine set
// them (from the annotations, which keep values a label cannot hold);
// a warm pool's unclaimed pods are not sandboxes yet.
func (b *Backend) List(ctx context.Context) ([]backend.ContainerInfo, error) {
	pods, err := b.cs.pods(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: backend.LabelManaged})
	if err != nil {
		return nil, b.wrap("list pods", err)
	}
	out := make([]backend.ContainerInfo, 0, len(pods.Items))
	for i := range pods.Items {
		if unclaimed(&pods.Items[i]) {
			continue
		}
		out = append(out, info(&pods.Items[i]))
	}
	return out, nil
}

// unclaimed reports whether pod waits in a warm pool: no sandbox yet, so
// not listed (nor removed by an owner or expiry sweep).
func unclaimed(pod *corev1.Pod) bool {
	return pod.Labels[LabelWarmPool] != "" && pod.Annotations[AnnotationClaim] == ""
}

// Inspect describes one pod by id, managed or not.
func (b *Backend) Inspect(ctx context.Context, containerID string) (backend.ContainerInfo, error) {
	pod, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
	if err != nil {
		return backend.ContainerInfo{}, b.wrap("inspect pod "+containerID, err)
	}
	return info(pod), nil
}

// info is a pod as a ContainerInfo.
func info(pod *corev1.Pod) backend.ContainerInfo {
	labels := map[string]string{}
	for k, v := range pod.Labels {
		if strings.HasPrefix(k, contractPrefix) {
			labels[k] = v
		}
	}
	for k, v := range pod.Annotations {
		if strings.HasPrefix(k, contractPrefix) {
			labels[k] = v
		}
	}
	c := backend.ContainerInfo{
		ID: pod.Name, Name: pod.Name, State: state(pod), Created: pod.CreationTimestamp.Time, Labels: labels,
		Network: pod.Annotations[AnnotationNetwork], Runtime: pod.Annotations[AnnotationRuntime],
	}
	if n := pod.Annotations[AnnotationName]; n != "" {
		c.Name = n
	}
	c.Pids, _ = strconv.ParseInt(pod.Annotations[AnnotationPids], 10, 64)
	for _, ct := range pod.Spec.Containers {
		if ct.Name != ContainerName {
			continue
		}
		c.Image = ct.Image
		if m, ok := ct.Resources.Limits[corev1.ResourceMemory]; ok {
			c.MemoryBytes = m.Value()
		}
		if cpu, ok := ct.Resources.Limits[corev1.ResourceCPU]; ok {
			c.NanoCPUs = cpu.MilliValue() * 1_000_000
		}
	}
	return c
}

// state maps a pod's phase to the engine's container states.
func state(pod *corev1.Pod) string {
	switch {
	case pod.DeletionTimestamp != nil:
		return "removing"
	case running(pod):
		return "running"
	case pod.Status.Phase == corev1.PodPending:
		return "created"
	case pod.Status.Phase == corev1.PodRunning:
		return "exited" // the pod runs, its sandbox container no longer
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return "exited"
	}
	return "unknown"
}
