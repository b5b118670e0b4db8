package kubernetes

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.Expirer = (*Backend)(nil)

// Expire moves the time the cluster ends the sandbox: an agent-sandbox
// Sandbox's shutdownTime, kept a lease ahead of now until at (see
// DefaultLease). A plain pod's activeDeadlineSeconds can only
// shrink, so its expiry is fixed (backend.ErrFixedExpiry): without
// agent-sandbox the cluster ends a sandbox at its creation-time expiry
// (created + idle TTL), used or not.
func (b *Backend) Expire(ctx context.Context, containerID string, at time.Time) error {
	if err := b.moveShutdown(ctx, containerID, b.leased(at)); err != nil {
		return err
	}
	b.holdLease(containerID, at)
	return nil
}

// moveShutdown sets the shutdownTime of the sandbox's Sandbox (and claim).
func (b *Backend) moveShutdown(ctx context.Context, containerID string, at time.Time) error {
	pod, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
	if err != nil {
		return b.wrap("get pod "+containerID, err)
	}
	if pod.Annotations[AnnotationAgentSandbox] != "true" {
		return fmt.Errorf("kubernetes: pod %s is a plain pod: %w", containerID, backend.ErrFixedExpiry)
	}
	if _, err := b.useAgentSandbox(); err != nil {
		return err
	}
	claim, sandbox, err := claimed(pod)
	if err != nil {
		return err
	}
	if claim != "" {
		return b.expireClaim(ctx, claim, sandbox, at)
	}
	patch := fmt.Appendf(nil, `{"spec":{"shutdownTime":%q}}`, at.UTC().Format(time.RFC3339))
	_, err = b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Patch(ctx, containerID, types.MergePatchType, patch, metav1.PatchOptions{})
	return b.wrap("move the shutdownTime of Sandbox "+containerID, err)
}
