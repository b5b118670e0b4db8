package kubernetes

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// policyGrace is how old a sandbox's NetworkPolicy without an owner must
// be before the sweep takes it: Create makes the policy first and hands it
// to the sandbox's pod or Sandbox a moment later, so only a policy whose
// server died in between stays ownerless this long.
const policyGrace = 2 * time.Minute

// RemoveOrphanVolumes removes what a sandbox leaves outside its pod: a
// sandbox's volumes are the emptyDirs of its pod, which die with it, but
// its NetworkPolicy is made before the pod and owned by it only once the
// pod exists, so a server that died in between leaves a policy no pod
// owns. Those (managed, ownerless, older than policyGrace, and orphan by
// their labels, which are the sandbox's) are deleted; their names are
// returned. Warm pools' policies carry no owner and are never taken.
func (b *Backend) RemoveOrphanVolumes(ctx context.Context, orphan func(backend.VolumeInfo) bool) ([]string, error) {
	list, err := b.cs.policies(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: backend.LabelManaged + "=true"})
	if err != nil {
		return nil, b.wrap("list network policies", err)
	}
	var removed []string
	var errs []error
	for _, np := range list.Items {
		if len(np.OwnerReferences) > 0 || np.Labels[backend.LabelOwner] == "" || time.Since(np.CreationTimestamp.Time) < policyGrace {
			continue
		}
		if !orphan(backend.VolumeInfo{Name: np.Name, Labels: np.Labels, Created: np.CreationTimestamp.Time}) {
			continue
		}
		err := b.cs.policies(b.namespace).Delete(ctx, np.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, b.wrap("delete network policy "+np.Name, err))
			continue
		}
		removed = append(removed, np.Name)
	}
	return removed, errors.Join(errs...)
}
