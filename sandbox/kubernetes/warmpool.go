package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// ExtensionsGroup is the API group of agent-sandbox's extensions:
// SandboxTemplate, SandboxWarmPool and SandboxClaim.
const ExtensionsGroup = "extensions.agents.x-k8s.io"

// extensionsVersions are the versions of the extensions this package
// writes objects for, best first (v1alpha1 is not among them, as for
// agentSandboxVersions).
var extensionsVersions = []string{"v1beta1"}

// ErrNoExtensions is returned by DiscoverExtensions when the cluster does
// not serve agent-sandbox's extensions (their CRDs are not installed).
var ErrNoExtensions = errors.New("agent-sandbox's extensions (SandboxTemplate, SandboxWarmPool, SandboxClaim) are not installed")

// Extensions are the resources of the extensions' version the cluster
// serves.
type Extensions struct {
	Templates, WarmPools, Claims schema.GroupVersionResource
}

// DiscoverExtensions returns the resources of the extensions' version the
// cluster serves that this package knows; a cluster serving the group only
// in other versions is an error naming them.
func DiscoverExtensions(d discoverer) (Extensions, error) {
	v, err := discoverVersion(d, ExtensionsGroup, extensionsVersions)
	if errors.Is(err, errGroupAbsent) {
		return Extensions{}, ErrNoExtensions
	}
	if err != nil {
		return Extensions{}, err
	}
	gv := schema.GroupVersion{Group: ExtensionsGroup, Version: v}
	return Extensions{
		Templates: gv.WithResource("sandboxtemplates"),
		WarmPools: gv.WithResource("sandboxwarmpools"),
		Claims:    gv.WithResource("sandboxclaims"),
	}, nil
}

var errGroupAbsent = errors.New("API group not served")

// discoverVersion returns the first of known that the cluster serves of
// group; errGroupAbsent when it serves none of the group.
func discoverVersion(d discoverer, group string, known []string) (string, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return "", fmt.Errorf("kubernetes: discover API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		var served []string
		for _, v := range g.Versions {
			served = append(served, v.Version)
		}
		for _, v := range known {
			if slices.Contains(served, v) {
				return v, nil
			}
		}
		return "", fmt.Errorf("kubernetes: the cluster serves %s %v; this version knows %v", group, served, known)
	}
	return "", errGroupAbsent
}

// WarmPools keeps agent-sandbox warm pools in one namespace: per
// language a SandboxTemplate (the hardened pod of Pod) and a
// SandboxWarmPool of it, and claims ready sandboxes from them.
type WarmPools struct {
	dyn       dynamic.Interface
	sandboxes schema.GroupVersionResource
	ext       Extensions
	ns        string
	demand    demand
	// staged reports whether a pod has the agent staged (nil: none has):
	// a claim picks those first.
	staged func(pod string) bool
}

// NewWarmPools returns the warm pools of namespace ns, made through dyn
// with the resources sandboxes (from DiscoverAgentSandbox) and ext (from
// DiscoverExtensions).
func NewWarmPools(dyn dynamic.Interface, sandboxes schema.GroupVersionResource, ext Extensions, ns string) *WarmPools {
	return &WarmPools{dyn: dyn, sandboxes: sandboxes, ext: ext, ns: ns}
}

// WarmPools returns the backend's warm pools, in its namespace; an error
// wrapping ErrNoAgentSandbox or ErrNoExtensions when the cluster lacks
// agent-sandbox or its extensions.
func (b *Backend) WarmPools() (*WarmPools, error) {
	sandboxes, err := DiscoverAgentSandbox(b.cs.disc)
	if err != nil {
		return nil, err
	}
	ext, err := DiscoverExtensions(b.cs.disc)
	if err != nil {
		return nil, err
	}
	w := NewWarmPools(b.dyn, sandboxes, ext, b.namespace)
	for lang, n := range b.cfg.WarmPool {
		w.SetGrowth(PoolName(lang), n, b.cfg.WarmPoolMax, b.cfg.WarmPoolIdle, b.log)
	}
	return w, nil
}

// PoolName is the name of a language's SandboxTemplate and
// SandboxWarmPool.
func PoolName(language string) string { return "mcp-sandbox-" + language }

// LabelWarmPool is the label of a pod made from a warm pool's template:
// the pool's name. The pool's deny-all NetworkPolicy selects by it.
const LabelWarmPool = "io.mcp-sandbox.warm-pool"

// networkPolicies is the resource of NetworkPolicy, written through the
// dynamic client like the pool's other objects.
var networkPolicies = networkingv1.SchemeGroupVersion.WithResource("networkpolicies")

// EnsureTemplate makes the SandboxTemplate name hold pod's labels,
// annotations and spec (pod comes from Pod: every hardening default), or
// updates it to, and a deny-all NetworkPolicy (no ingress, no egress) for
// every pod made from it, selected by LabelWarmPool. (agent-sandbox
// v0.5.0's own policy for a template selects a label its pods do not carry,
// and left out it would allow the public internet: it is set empty
// as well, for versions where it does select them.)
//
// pod's labels and annotations must be what every sandbox of the pool
// shares (managed, language, limits): agent-sandbox
// refuses a claim that would change one of the template's, so what is a
// sandbox's own (its id, expiry, client) goes with Claim. The sandbox id
// is left out here whatever pod says.
func (w *WarmPools) EnsureTemplate(ctx context.Context, name string, pod *corev1.Pod) error {
	labels, annotations := maps.Clone(pod.Labels), maps.Clone(pod.Annotations)
	delete(labels, backend.LabelID)
	delete(annotations, backend.LabelID)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelWarmPool] = name
	if err := w.ensureDenyAll(ctx, name); err != nil {
		return err
	}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod.Spec)
	if err != nil {
		return fmt.Errorf("kubernetes: pod spec: %w", err)
	}
	u := w.object(w.ext.Templates, "SandboxTemplate", name, map[string]any{
		"podTemplate": map[string]any{
			"metadata": map[string]any{"labels": toAny(labels), "annotations": toAny(annotations)},
			"spec":     spec,
		},
		"networkPolicyManagement": "Managed",
		"networkPolicy":           map[string]any{"ingress": []any{}, "egress": []any{}},
		"envVarsInjectionPolicy":  "Disallowed",
	})
	return w.apply(ctx, w.ext.Templates, u, true)
}

// DenyAllName is the name of the warm pool name's NetworkPolicy.
func DenyAllName(pool string) string { return pool + "-deny-all" }

// ensureDenyAll makes the pool's deny-all NetworkPolicy, before any pod
// of the pool exists.
func (w *WarmPools) ensureDenyAll(ctx context.Context, pool string) error {
	np := isolatingPolicy("", "", nil, map[string]string{LabelWarmPool: pool}, false)
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&np.Spec)
	if err != nil {
		return fmt.Errorf("kubernetes: network policy: %w", err)
	}
	spec["ingress"], spec["egress"] = []any{}, []any{}
	u := w.object(networkPolicies, "NetworkPolicy", DenyAllName(pool), spec)
	return w.apply(ctx, networkPolicies, u, false)
}

// EnsurePool makes the SandboxWarmPool name keep size ready sandboxes of
// the template of the same name, or updates it to.
func (w *WarmPools) EnsurePool(ctx context.Context, name string, size int) error {
	if size < 0 {
		return fmt.Errorf("kubernetes: warm pool %s: size %d", name, size)
	}
	u := w.object(w.ext.WarmPools, "SandboxWarmPool", name, map[string]any{
		"replicas":           int64(size),
		"sandboxTemplateRef": map[string]any{"name": name},
	})
	return w.apply(ctx, w.ext.WarmPools, u, false)
}

// Ensure makes the warm pool name: its NetworkPolicy, its template from
// pod and its pool of size (EnsureTemplate, then EnsurePool).
func (w *WarmPools) Ensure(ctx context.Context, name string, pod *corev1.Pod, size int) error {
	if err := w.EnsureTemplate(ctx, name, pod); err != nil {
		return err
	}
	return w.EnsurePool(ctx, name, size)
}

// Ready is the number of ready sandboxes the pool name holds now.
func (w *WarmPools) Ready(ctx context.Context, name string) (int, error) {
	u, err := w.dyn.Resource(w.ext.WarmPools).Namespace(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("kubernetes: warm pool %s: %w", name, err)
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	return int(n), nil
}

// Delete removes the pool and the template name (the pool's unclaimed
// sandboxes with them); either being gone already is no error. Claimed
// sandboxes stay until their claims go, and the pool's NetworkPolicy with
// them (DeletePolicy).
func (w *WarmPools) Delete(ctx context.Context, name string) error {
	for _, gvr := range []schema.GroupVersionResource{w.ext.WarmPools, w.ext.Templates} {
		err := w.dyn.Resource(gvr).Namespace(w.ns).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsForbidden(err) {
			return fmt.Errorf("kubernetes: this Role may not delete %s %s: remove it as the warm pools' admin (docs/kubernetes.md): %w", gvr.Resource, name, err)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kubernetes: delete %s %s: %w", gvr.Resource, name, err)
		}
	}
	return nil
}

// DeletePolicy removes the pool name's NetworkPolicy: only once no pod of
// the pool is left (claimed ones included), which the caller knows.
func (w *WarmPools) DeletePolicy(ctx context.Context, name string) error {
	err := w.dyn.Resource(networkPolicies).Namespace(w.ns).Delete(ctx, DenyAllName(name), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubernetes: delete network policy %s: %w", DenyAllName(name), err)
	}
	return nil
}

func (w *WarmPools) object(gvr schema.GroupVersionResource, kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       kind,
		"metadata": map[string]any{
			"name": name, "namespace": w.ns,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "mcp-sandbox"},
		},
		"spec": spec,
	}}
}

// apply creates u, or merges its spec into the object already there (a
// merge patch: no conflict with the controller's status writes). When the
// Role may not, the object there is used as it is (useExisting: the same
// spec when sameSpec).
func (w *WarmPools) apply(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, sameSpec bool) error {
	rc := w.dyn.Resource(gvr).Namespace(w.ns)
	_, err := rc.Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsForbidden(err) {
		return w.useExisting(ctx, gvr, u, sameSpec, err)
	}
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("kubernetes: create %s %s: %w", gvr.Resource, u.GetName(), err)
		}
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": u.Object["spec"]})
	if err != nil {
		return fmt.Errorf("kubernetes: %s %s: %w", gvr.Resource, u.GetName(), err)
	}
	_, err = rc.Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsForbidden(err) {
		return w.useExisting(ctx, gvr, u, sameSpec, err)
	}
	if err != nil {
		return fmt.Errorf("kubernetes: update %s %s: %w", gvr.Resource, u.GetName(), err)
	}
	return nil
}

// Claimed is a sandbox a SandboxClaim bound: the agent-sandbox Sandbox and
// the pod that runs it.
type Claimed struct {
	Namespace, Claim, Sandbox, Pod string
}

// ClaimLabelDomain is the only label domain agent-sandbox lets a claim set
// on its pod (by default): Claim writes each label key k as
// ClaimLabelDomain/k.
const ClaimLabelDomain = "sandbox.users.io"

// ClaimLabel is the label key a claimed pod carries for label key k.
func ClaimLabel(k string) string { return ClaimLabelDomain + "/" + k }

// Claim reserves one of the warm pool pool's ready sandboxes
// (AnnotationReservedBy) and makes the SandboxClaim name on the pool naming
// it (AssignedSandbox), carrying labels (each under ClaimLabel) and
// annotations (as they are) to the sandbox's pod, deleted with its sandbox
// by the cluster at expires, and waits until it is bound. With none ready
// it makes no claim and returns an error wrapping errNoWarmPool (the
// pool grows: warmgrow.go). ctx bounds the wait; on any error the claim is
// deleted.
func (w *WarmPools) Claim(ctx context.Context, pool, name string, labels, annotations map[string]string, expires time.Time) (Claimed, error) {
	claimLabels := make(map[string]string, len(labels))
	for k, v := range labels {
		claimLabels[ClaimLabel(k)] = v
	}
	u := w.object(w.ext.Claims, "SandboxClaim", name, map[string]any{
		"warmPoolRef": map[string]any{"name": pool},
		"lifecycle": map[string]any{
			"shutdownTime":   expires.UTC().Format(time.RFC3339),
			"shutdownPolicy": "Delete",
		},
		"additionalPodMetadata": map[string]any{"labels": toAny(claimLabels), "annotations": toAny(annotations)},
	})
	sb := w.pickReady(ctx, pool, name)
	w.demanded(pool, sb != "")
	if sb == "" {
		// None ready: a Sandbox of the caller's own starts as fast as one
		// agent-sandbox would start for the claim, and no claim is left
		// to its queue (see AssignedSandbox).
		return Claimed{}, fmt.Errorf("kubernetes: warm pool %s: none ready: %w", pool, errNoWarmPool)
	}
	u.SetAnnotations(map[string]string{AssignedSandbox: sb})
	rc := w.dyn.Resource(w.ext.Claims).Namespace(w.ns)
	created, err := rc.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		w.unreserve(context.WithoutCancel(ctx), pool, sb)
		return Claimed{}, fmt.Errorf("kubernetes: claim from warm pool %s: %w", pool, err)
	}
	c, err := w.waitAdopted(ctx, created, sb)
	if err != nil {
		_ = w.Release(context.WithoutCancel(ctx), name)
		w.unreserve(context.WithoutCancel(ctx), pool, sb)
		return Claimed{}, fmt.Errorf("kubernetes: claim %s from warm pool %s: %w", name, pool, err)
	}
	return c, nil
}

// Release deletes the claim name, and with it its sandbox and pod.
func (w *WarmPools) Release(ctx context.Context, name string) error {
	err := w.dyn.Resource(w.ext.Claims).Namespace(w.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubernetes: delete claim %s: %w", name, err)
	}
	return nil
}

// waitBound watches the claim from its creation until it names a ready
// sandbox, then reads that sandbox's pod name.
func (w *WarmPools) waitBound(ctx context.Context, claim *unstructured.Unstructured) (Claimed, error) {
	rc := w.dyn.Resource(w.ext.Claims).Namespace(w.ns)
	name := claim.GetName()
	for {
		sb, err := boundSandbox(claim)
		if err != nil {
			return Claimed{}, err
		}
		if sb != "" {
			return w.claimed(ctx, claim, sb)
		}
		wi, err := rc.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: claim.GetResourceVersion()})
		if err != nil {
			return Claimed{}, err
		}
		next, err := nextBound(ctx, wi, claim)
		wi.Stop()
		if err != nil {
			return Claimed{}, err
		}
		if next == nil { // the watch ended: read it again, then watch on
			if next, err = rc.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return Claimed{}, err
			}
		}
		claim = next
	}
}

// nextBound reads wi until the claim is bound or failed (returned), the
// watch ends (nil), or ctx does; last is the claim as last seen.
func nextBound(ctx context.Context, wi watch.Interface, last *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not bound to a ready sandbox (%s): %w", readyMessage(last), ctx.Err())
		case ev, open := <-wi.ResultChan():
			if !open || ev.Type == watch.Error {
				return nil, nil
			}
			if ev.Type == watch.Deleted {
				return nil, errors.New("the claim was deleted before it was bound")
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			last = u
			if sb, err := boundSandbox(u); sb != "" || err != nil {
				return u, nil
			}
		}
	}
}

// boundSandbox is the name of the sandbox the claim is bound to, once
// that sandbox is ready (the claim's Ready condition); "" before. A claim
// agent-sandbox refuses (its metadata) is an error.
func boundSandbox(claim *unstructured.Unstructured) (string, error) {
	name, _, _ := unstructured.NestedString(claim.Object, "status", "sandbox", "name")
	ready := readyCondition(claim)
	msg, _ := ready["message"].(string)
	if ready["reason"] == "InvalidMetadata" || strings.Contains(msg, "metadata override conflict") {
		return "", fmt.Errorf("agent-sandbox refuses the claim: %v", ready["message"])
	}
	if name == "" || ready["status"] != "True" {
		return "", nil
	}
	return name, nil
}

// readyCondition is the claim's Ready condition; nil when it has none.
func readyCondition(claim *unstructured.Unstructured) map[string]any {
	conds, _, _ := unstructured.NestedSlice(claim.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			return m
		}
	}
	return nil
}

// readyMessage says where the claim stands, for a timeout's error.
func readyMessage(claim *unstructured.Unstructured) string {
	if c := readyCondition(claim); c != nil {
		return fmt.Sprintf("Ready %v: %v %v", c["status"], c["reason"], c["message"])
	}
	return "no Ready condition yet"
}

// claimed reads the pod name of the bound sandbox: agent-sandbox's pod-name
// annotation (a sandbox adopted from a pool runs the pool's pod), else the
// sandbox's own name. A sandbox the claim does not control (another
// claim adopted it too) is an error: never a pod two sandboxes share.
func (w *WarmPools) claimed(ctx context.Context, claim *unstructured.Unstructured, sandbox string) (Claimed, error) {
	sb, err := w.dyn.Resource(w.sandboxes).Namespace(w.ns).Get(ctx, sandbox, metav1.GetOptions{})
	if err != nil {
		return Claimed{}, fmt.Errorf("sandbox %s: %w", sandbox, err)
	}
	if !controlledBy(sb, claim.GetUID()) {
		return Claimed{}, fmt.Errorf("sandbox %s was adopted by another claim at the same time; create the sandbox again", sandbox)
	}
	return w.claimedFrom(claim, sb), nil
}

// claimedFrom is the claim's Claimed for its sandbox sb.
func (w *WarmPools) claimedFrom(claim, sb *unstructured.Unstructured) Claimed {
	pod := sb.GetAnnotations()[AgentSandboxGroup+"/pod-name"]
	if pod == "" {
		pod = sb.GetName()
	}
	return Claimed{Namespace: w.ns, Claim: claim.GetName(), Sandbox: sb.GetName(), Pod: pod}
}
