package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A team's Role may claim from warm pools but not make or change their
// SandboxTemplates and SandboxWarmPools (AdminPermissions: the platform
// team's admin Role does). Such a server uses the pools the admin made,
// named as it would name them (PoolName), when their template is the one
// it would write (the same image, limits and hardening: a claim gets the
// template's pod, whatever the server asked for); without one it makes
// each sandbox a Sandbox of its own, and says so (doctor, the log).

// useExisting is apply's fallback when the Role may not write u: the
// object already there does, when its spec is u's (sameSpec) or, for a
// pool, whatever its size; else an error wrapping errNoWarmPool.
func (w *WarmPools) useExisting(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, sameSpec bool, denied error) error {
	have, err := w.dyn.Resource(gvr).Namespace(w.ns).Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("kubernetes: no %s %s, and this Role may not make it (%v): ask your cluster admin to make the warm pool (docs/kubernetes.md): %w",
			gvr.Resource, u.GetName(), denied, errNoWarmPool)
	case err != nil:
		return fmt.Errorf("kubernetes: %s %s: %w", gvr.Resource, u.GetName(), err)
	case sameSpec && !specEqual(have, u):
		return fmt.Errorf("kubernetes: %s %s is not the one this server makes (image, limits or hardening differ), and this Role may not change it: ask your cluster admin to update the warm pool: %w",
			gvr.Resource, u.GetName(), errNoWarmPool)
	}
	return nil
}

// specEqual reports whether have's spec is want's, as JSON values, but
// for the defaults the cluster adds (clusterDefaults).
func specEqual(have, want *unstructured.Unstructured) bool {
	h, _ := have.Object["spec"].(map[string]any)
	w, _ := want.Object["spec"].(map[string]any)
	if h == nil || w == nil {
		return false
	}
	for k, v := range w {
		if !reflect.DeepEqual(jsonValue(v), jsonValue(h[k])) {
			return false
		}
	}
	for k := range h {
		if _, ok := w[k]; !ok && !clusterDefaults[k] {
			return false
		}
	}
	return true
}

// clusterDefaults are the template fields the cluster fills in by itself
// (agent-sandbox v0.5.0's CRD defaults).
var clusterDefaults = map[string]bool{"volumeClaimTemplatesPolicy": true}

// jsonValue is v as encoding/json decodes it (numbers as float64).
func jsonValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return err
	}
	return out
}

// checkPoolAdmin says, with kubernetes.warm_pool set, whether this Role
// makes and sizes the warm pools itself (AdminPermissions) or claims from
// the ones an admin made, and names each configured pool that is missing
// (its sandboxes then start without one: a warning, not a failure).
func (r *Report) checkPoolAdmin(ctx context.Context, b *Backend) {
	var langs []string
	for lang, n := range b.cfg.WarmPool {
		if n > 0 {
			langs = append(langs, lang)
		}
	}
	if len(langs) == 0 {
		return
	}
	slices.Sort(langs)
	admin := true
	for _, p := range AdminPermissions() {
		ok, err := allowed1(ctx, b.cs, b.namespace, p)
		admin = admin && ok && err == nil
	}
	if admin {
		r.add(Check{Name: "warm pool", OK: true, Detail: "this Role makes and sizes the warm pools " + strings.Join(poolNames(langs), ", ")})
		return
	}
	w, err := b.WarmPools()
	if err != nil {
		r.add(Check{Name: "warm pool", Detail: err.Error()})
		return
	}
	var missing []string
	for _, lang := range langs {
		if _, err := w.dyn.Resource(w.ext.WarmPools).Namespace(w.ns).Get(ctx, PoolName(lang), metav1.GetOptions{}); err != nil {
			missing = append(missing, PoolName(lang))
		}
	}
	c := Check{Name: "warm pool", OK: true, Detail: "this Role claims from the warm pools an admin made, and may not make or resize them: " + strings.Join(poolNames(langs), ", ")}
	if len(missing) > 0 {
		c.Detail = fmt.Sprintf("no warm pool %s, and this Role may not make one: those sandboxes start without one (a second or more each)", strings.Join(missing, ", "))
		c.Fix = "as the pools' admin (docs/kubernetes.md's admin Role), run `echo | mcp-sandbox run --lang LANGUAGE -` once per language with this config, or set kubernetes.warm_pool = {}"
	}
	r.add(c)
}

func poolNames(langs []string) []string {
	out := make([]string, len(langs))
	for i, l := range langs {
		out[i] = PoolName(l)
	}
	return out
}
