package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.ArchReporter = (*Backend)(nil)

// EnsureImage records the pull policy for the image's pods: the cluster's
// nodes pull, not the server. With policy "never" the image must be on a
// node already (as the kubelets report their images), else the error wraps
// backend.ErrImageNotFound; "missing" and "always" become the pods'
// IfNotPresent and Always, and a pull that fails shows at Create. The
// image's own user is not known (the cluster does not say): the engine's
// default sandbox user applies.
func (b *Backend) EnsureImage(ctx context.Context, image, policy string, progress func(backend.PullProgress)) (backend.ImageInfo, error) {
	pp := corev1.PullIfNotPresent
	switch policy {
	case "never":
		pp = corev1.PullNever
	case "always":
		pp = corev1.PullAlways
	case "missing", "":
	default:
		return backend.ImageInfo{}, fmt.Errorf("kubernetes: image pull policy %q unknown", policy)
	}
	b.mu.Lock()
	if b.policy == nil {
		b.policy = map[string]corev1.PullPolicy{}
	}
	b.policy[image] = pp
	b.mu.Unlock()
	if pp != corev1.PullNever {
		return backend.ImageInfo{ID: canonicalImage(image)}, nil
	}
	want := canonicalImage(image)
	nodes, err := b.cs.nodes.List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		// A Role without the nodes (a cluster-scoped read) cannot look:
		// Create reports the kubelet's ErrImageNeverPull instead.
		return backend.ImageInfo{ID: want}, nil
	}
	if err != nil {
		return backend.ImageInfo{}, b.wrap("list nodes for their images", err)
	}
	for _, n := range nodes.Items {
		for _, img := range n.Status.Images {
			if slices.Contains(img.Names, want) || slices.Contains(img.Names, image) {
				return backend.ImageInfo{ID: want}, nil
			}
		}
	}
	return backend.ImageInfo{}, fmt.Errorf("%w: %s is on no node of the cluster and the pull policy is never", backend.ErrImageNotFound, image)
}

// pullPolicy is the pods' imagePullPolicy for image (IfNotPresent unless
// EnsureImage said otherwise).
func (b *Backend) pullPolicy(image string) corev1.PullPolicy {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.policy[image]; ok {
		return p
	}
	return corev1.PullIfNotPresent
}

// canonicalImage is the full reference a kubelet reports an image by:
// docker.io/library/ for a bare name, docker.io/ for a path without a
// registry, :latest without a tag or digest.
func canonicalImage(ref string) string {
	first, _, hasSlash := strings.Cut(ref, "/")
	switch {
	case !hasSlash:
		ref = "docker.io/library/" + ref
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		ref = "docker.io/" + ref
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(ref, "@") {
		ref += ":latest"
	}
	return ref
}

// EngineArch is the architecture of the cluster's first node (the agent
// binary copied into sandboxes is chosen by it; a cluster of mixed
// architectures would need the pod's node instead). The answer is asked
// once (each agent's start needs it, and a round trip through a loaded
// API server takes hundreds of milliseconds); so is a refusal (a Role
// that may not list nodes: the caller then assumes its own).
func (b *Backend) EngineArch(ctx context.Context) (string, error) {
	b.mu.Lock()
	a := b.arch
	b.mu.Unlock()
	if a.known {
		return a.arch, a.err
	}
	a.arch, a.err = b.nodeArch(ctx)
	if a.err == nil || apierrors.IsForbidden(a.err) {
		a.known = true
		b.mu.Lock()
		b.arch = a
		b.mu.Unlock()
	}
	return a.arch, a.err
}

// archAnswer is EngineArch's answer, kept once it is final.
type archAnswer struct {
	known bool
	arch  string
	err   error
}

// nodeArch asks the cluster for its first node's architecture.
func (b *Backend) nodeArch(ctx context.Context) (string, error) {
	nodes, err := b.cs.nodes.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", b.wrap("list nodes", err)
	}
	if len(nodes.Items) == 0 {
		return "", fmt.Errorf("kubernetes: the cluster has no node")
	}
	return nodes.Items[0].Status.NodeInfo.Architecture, nil
}
