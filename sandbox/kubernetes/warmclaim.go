package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// claimTimeout bounds how long Create waits for a claim to bind.
const claimTimeout = startTimeout

// labelLanguage is the engine's language label (package sandbox's
// LabelLanguage): it picks the warm pool.
const labelLanguage = "io.mcp-sandbox.language"

// poolShared are the labels and annotations a warm pool's template holds:
// what every sandbox of the pool shares, whichever server of the
// installation claims it. Every other one (the id, owner, client, expiry,
// creation time, name) is the sandbox's own and goes with its claim:
// agent-sandbox refuses a claim that changes a template's.
var poolShared = map[string]bool{
	backend.LabelManaged: true, labelLanguage: true, // not the installation: an admin's pool serves the team's
	AnnotationNetwork: true, AnnotationPids: true, AnnotationRuntime: true, AnnotationUser: true,
	AnnotationAgentSandbox: true,
}

// errNoWarmPool: the sandbox is not made from a warm pool (none is
// configured for its language, the cluster lacks agent-sandbox's
// extensions, or its pod differs from the pool's template).
var errNoWarmPool = errors.New("no warm pool for this sandbox")

// warmState is what the backend knows of its warm pools: the pools (nil
// until the extensions are discovered) and, per language, the template it
// ensured (as JSON, to compare a new sandbox's pod with).
type warmState struct {
	pools     *WarmPools
	err       error
	templates map[string]string
}

// splitShared returns pod's template (only the shared labels and
// annotations) and the sandbox's own labels and annotations.
func splitShared(pod *corev1.Pod) (tmpl *corev1.Pod, labels, annotations map[string]string) {
	tmpl = pod.DeepCopy()
	tmpl.Name = "" // the sandbox's own, and no part of a template
	labels, annotations = map[string]string{}, map[string]string{}
	maps.DeleteFunc(tmpl.Labels, func(k, v string) bool {
		if !poolShared[k] {
			labels[k] = v
		}
		return !poolShared[k]
	})
	maps.DeleteFunc(tmpl.Annotations, func(k, v string) bool {
		if !poolShared[k] {
			annotations[k] = v
		}
		return !poolShared[k]
	})
	return tmpl, labels, annotations
}

// warmPoolFor returns the warm pools and the pool name for pod, having
// ensured the language's template and pool on first use; errNoWarmPool
// when the sandbox is to be made as a Sandbox of its own.
func (b *Backend) warmPoolFor(ctx context.Context, pod, tmpl *corev1.Pod) (*WarmPools, string, error) {
	lang := pod.Labels[labelLanguage]
	size := b.cfg.WarmPool[lang]
	if size <= 0 {
		return nil, "", errNoWarmPool
	}
	b.warmMu.Lock()
	defer b.warmMu.Unlock()
	if _, err := b.warmPoolsLocked(); err != nil {
		b.log.Debug("no warm pool: agent-sandbox's extensions", "err", err)
		return nil, "", errNoWarmPool
	}
	fp, err := json.Marshal(tmpl)
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes: template: %w", err)
	}
	name := PoolName(lang)
	switch b.warm.templates[lang] {
	case string(fp):
		return b.warm.pools, name, nil
	case "":
		if err := b.warm.pools.Ensure(ctx, name, tmpl, size); err != nil {
			return nil, "", err
		}
		b.warm.templates[lang] = string(fp)
		b.kickStaging()
		return b.warm.pools, name, nil
	}
	// Another shape (limits, image, environment) than the pool's: a
	// Sandbox of its own.
	return nil, "", errNoWarmPool
}

// warmPools returns the backend's warm pools, discovered once.
func (b *Backend) warmPools() (*WarmPools, error) {
	b.warmMu.Lock()
	defer b.warmMu.Unlock()
	return b.warmPoolsLocked()
}

func (b *Backend) warmPoolsLocked() (*WarmPools, error) {
	if b.warm.pools == nil && b.warm.err == nil {
		b.warm.pools, b.warm.err = b.WarmPools()
		b.warm.templates = map[string]string{}
		if b.warm.pools != nil {
			b.warm.pools.staged = b.stg.has
		}
	}
	return b.warm.pools, b.warm.err
}

// createClaimed claims the sandbox from its language's warm pool, carrying
// its own labels (under ClaimLabelDomain, the only domain a claim may
// set) and annotations (which hold every contract label, as List reads
// them), and sets them on the pod as well: agent-sandbox copies a claim's
// metadata onto an adopted pod some time after the claim is bound. The
// pod also gets the contract labels themselves, as a pod made directly
// carries them, before Create returns: agent-sandbox only removes labels
// it propagated from a template, so they stay. The id is the pod's name.
func (b *Backend) createClaimed(ctx context.Context, pod *corev1.Pod, expires time.Time) (string, error) {
	pod.Annotations[AnnotationAgentSandbox] = "true"
	tmpl, labels, annotations := splitShared(pod)
	w, pool, err := b.warmPoolFor(ctx, pod, tmpl)
	if err != nil {
		return "", err
	}
	claim := pod.Name
	annotations[AnnotationClaim] = claim
	cctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	start := time.Now()
	c, err := w.Claim(cctx, pool, claim, labels, annotations, b.leased(expires))
	if err != nil {
		return "", err
	}
	b.holdLease(c.Pod, expires)
	b.log.Debug("claimed from the warm pool", "pool", pool, "pod", c.Pod, "ms", time.Since(start).Milliseconds())
	podLabels := maps.Clone(labels)
	for k, v := range labels {
		podLabels[ClaimLabel(k)] = v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": podLabels, "annotations": annotations}})
	var patched *corev1.Pod
	if err == nil {
		patched, err = b.cs.pods(b.namespace).Patch(ctx, c.Pod, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err == nil {
		b.noteUser(patched)
		b.dropForeignCopy(patched)
	}
	if err == nil && !running(patched) {
		// A ready pool pod runs: the patch's answer says so, no Get.
		err = b.waitStarted(ctx, c.Pod)
	}
	if err != nil {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if rerr := w.Release(cctx, claim); rerr != nil {
			b.log.Warn("release a claim whose sandbox did not start", "claim", claim, "err", rerr)
		}
		return "", b.wrap("claimed pod "+c.Pod, err)
	}
	return c.Pod, nil
}

// claimOf returns the SandboxClaim and the Sandbox of a pod claimed from a
// warm pool; "" for any other pod, or one that is gone.
func (b *Backend) claimOf(ctx context.Context, containerID string) (claim, sandbox string, err error) {
	if ok, _ := b.useAgentSandbox(); !ok {
		return "", "", nil
	}
	pod, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", b.wrap("get pod "+containerID, err)
	}
	return claimed(pod)
}

// releaseClaim deletes the claim of a pod claimed from a warm pool, and
// its Sandbox (the claim's deletion removes it too, in the background).
func (b *Backend) releaseClaim(ctx context.Context, claim, sandbox string, opts metav1.DeleteOptions) error {
	w, err := b.warmPools()
	if err != nil {
		return b.wrap("release claim "+claim, err)
	}
	if err := w.Release(ctx, claim); err != nil {
		return err
	}
	if sandbox == "" {
		return nil
	}
	err = b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Delete(ctx, sandbox, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return b.wrap("delete Sandbox "+sandbox, err)
	}
	return nil
}

// expireClaim moves the shutdownTime of a claimed sandbox: its claim's
// and its Sandbox's.
func (b *Backend) expireClaim(ctx context.Context, claim, sandbox string, at time.Time) error {
	w, err := b.warmPools()
	if err != nil {
		return b.wrap("expire claim "+claim, err)
	}
	t := at.UTC().Format(time.RFC3339)
	patch := fmt.Appendf(nil, `{"spec":{"lifecycle":{"shutdownTime":%q}}}`, t)
	if _, err := b.dyn.Resource(w.ext.Claims).Namespace(b.namespace).Patch(ctx, claim, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return b.wrap("move the shutdownTime of claim "+claim, err)
	}
	if sandbox == "" {
		return nil
	}
	patch = fmt.Appendf(nil, `{"spec":{"shutdownTime":%q}}`, t)
	_, err = b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Patch(ctx, sandbox, types.MergePatchType, patch, metav1.PatchOptions{})
	return b.wrap("move the shutdownTime of Sandbox "+sandbox, err)
}

// renameClaim sets the name annotation the claim gives its pod.
func (b *Backend) renameClaim(ctx context.Context, claim, name string) error {
	w, err := b.warmPools()
	if err != nil {
		return b.wrap("rename claim "+claim, err)
	}
	patch := fmt.Appendf(nil, `{"spec":{"additionalPodMetadata":{"annotations":{%q:%q}}}}`, AnnotationName, name)
	_, err = b.dyn.Resource(w.ext.Claims).Namespace(b.namespace).Patch(ctx, claim, types.MergePatchType, patch, metav1.PatchOptions{})
	return b.wrap("rename claim "+claim, err)
}

// claimed reads the claim and Sandbox names off a pod.
func claimed(pod *corev1.Pod) (claim, sandbox string, err error) {
	claim = pod.Annotations[AnnotationClaim]
	if claim == "" {
		return "", "", nil
	}
	if !dnsLabel.MatchString(claim) {
		return "", "", fmt.Errorf("kubernetes: pod %s: claim %q", pod.Name, claim)
	}
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Sandbox" {
			sandbox = o.Name
		}
	}
	return claim, sandbox, nil
}
