package kubernetes

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// WaitExit watches the pod until its sandbox container has ended (its exit
// code, and OOMKilled from the kubelet's reason) or the pod is being
// deleted or gone (Removed).
func (b *Backend) WaitExit(ctx context.Context, containerID string) (backend.ContainerExit, error) {
	if err := ctx.Err(); err != nil {
		return backend.ContainerExit{}, err
	}
	if !dnsLabel.MatchString(containerID) {
		return backend.ContainerExit{Removed: true}, nil
	}
	for {
		pod, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return backend.ContainerExit{Removed: true}, nil
		}
		if err != nil {
			return backend.ContainerExit{}, b.wrap("get pod "+containerID, err)
		}
		if ex, ok := exited(pod); ok {
			return ex, nil
		}
		w, err := b.cs.pods(b.namespace).Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", containerID).String(),
			ResourceVersion: pod.ResourceVersion,
		})
		if err != nil {
			return backend.ContainerExit{}, b.wrap("watch pod "+containerID, err)
		}
		ex, done := watchExit(ctx, w)
		w.Stop()
		if done {
			return ex, nil
		}
		if err := ctx.Err(); err != nil {
			return backend.ContainerExit{}, err
		}
		// The watch ended (a timeout, a compaction): look again.
		select {
		case <-ctx.Done():
			return backend.ContainerExit{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// watchExit reads events until the pod ends or is deleted (done), or the
// watch or ctx ends.
func watchExit(ctx context.Context, w watch.Interface) (backend.ContainerExit, bool) {
	for {
		select {
		case <-ctx.Done():
			return backend.ContainerExit{}, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return backend.ContainerExit{}, false
			}
			if ev.Type == watch.Deleted {
				return backend.ContainerExit{Removed: true}, true
			}
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				if ex, ok := exited(pod); ok {
					return ex, true
				}
			}
		}
	}
}

// exited says how the pod's sandbox container ended, if it has. A pod
// being deleted (by kubectl delete, the cluster ending its Sandbox, or a
// server) is Removed at once: its container's exit on the way out (the
// keep-alive's 0 on SIGTERM) would name a death the sandbox did not die.
func exited(pod *corev1.Pod) (backend.ContainerExit, bool) {
	ex := backend.ContainerExit{Runtime: pod.Annotations[AnnotationRuntime]}
	if pod.DeletionTimestamp != nil {
		ex.Removed = true
		return ex, true
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != ContainerName || c.State.Terminated == nil {
			continue
		}
		t := c.State.Terminated
		ex.ExitCode = int(t.ExitCode)
		ex.OOMKilled = t.Reason == "OOMKilled"
		return ex, true
	}
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		// Ended before its container ran (or the deadline killed it).
		ex.ExitCode = -1
		return ex, true
	}
	return ex, false
}
