package kubernetes

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// removeTimeout bounds how long Remove waits for the pod to be gone.
const removeTimeout = 60 * time.Second

// Remove deletes the sandbox's claim and Sandbox object (if any), its pod and its
// NetworkPolicy, and waits until the pod is gone. Its memory-backed
// volumes die with the pod. What is gone already is not an error.
func (b *Backend) Remove(ctx context.Context, containerID string) error {
	if !dnsLabel.MatchString(containerID) {
		return nil // no object can have that name
	}
	b.forgetUsage(containerID)
	b.dropLease(containerID)
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	claim, sandbox, err := b.claimOf(ctx, containerID)
	if err != nil {
		return err
	}
	if claim != "" {
		if err := b.releaseClaim(ctx, claim, sandbox, opts); err != nil {
			return err
		}
	}
	if ok, _ := b.useAgentSandbox(); ok {
		err := b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Delete(ctx, containerID, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return b.wrap("delete Sandbox "+containerID, err)
		}
	}
	err = b.cs.pods(b.namespace).Delete(ctx, containerID, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return b.wrap("delete pod "+containerID, err)
	}
	err = b.cs.policies(b.namespace).Delete(ctx, containerID, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return b.wrap("delete network policy "+containerID, err)
	}
	return b.waitGone(ctx, containerID)
}

// waitGone polls until the pod no longer exists.
func (b *Backend) waitGone(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := b.cs.pods(b.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubernetes: pod %s still there after it was deleted: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// Rename gives the sandbox a new engine name: Kubernetes names cannot
// change, so the name annotation does: on the pod, which List reads, and
// on its Sandbox object and the Sandbox's pod template, whose annotations
// agent-sandbox's controller copies onto the running pod (in place).
func (b *Backend) Rename(ctx context.Context, containerID, name string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationName, name)
	sandbox := containerID
	claim, sb, err := b.claimOf(ctx, containerID)
	if err != nil {
		return err
	}
	if claim != "" {
		// agent-sandbox copies the claim's pod annotations onto the pod
		// again: the claim's must change too.
		sandbox = sb
		if err := b.renameClaim(ctx, claim, name); err != nil {
			return err
		}
	}
	if ok, _ := b.useAgentSandbox(); ok && sandbox != "" {
		sbPatch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}},"spec":{"podTemplate":{"metadata":{"annotations":{%q:%q}}}}}`,
			AnnotationName, name, AnnotationName, name)
		_, err := b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Patch(ctx, sandbox, types.MergePatchType, sbPatch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return b.wrap("rename Sandbox "+sandbox, err)
		}
	}
	_, err = b.cs.pods(b.namespace).Patch(ctx, containerID, types.MergePatchType, patch, metav1.PatchOptions{})
	return b.wrap("rename pod "+containerID, err)
}
