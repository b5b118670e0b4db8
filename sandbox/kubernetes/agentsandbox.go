package kubernetes

import (
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AgentSandboxGroup is the API group of kubernetes-sigs/agent-sandbox's
// Sandbox resource.
const AgentSandboxGroup = "agents.x-k8s.io"

// agentSandboxVersions are the versions of that group this package writes
// objects for, best first. v1alpha1 is not among them: later releases
// removed it, and serving it needs a conversion webhook the API server may
// not reach.
var agentSandboxVersions = []string{"v1beta1"}

// ErrNoAgentSandbox is returned by DiscoverAgentSandbox when the cluster
// does not serve agent-sandbox's Sandbox resource (its CRDs are not
// installed).
var ErrNoAgentSandbox = errors.New("agent-sandbox is not installed")

// DiscoverAgentSandbox returns the Sandbox resource of the agent-sandbox
// version the cluster serves that this package knows. A cluster serving the
// group only in versions it does not know is an error naming them.
func DiscoverAgentSandbox(d discoverer) (schema.GroupVersionResource, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("kubernetes: discover API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != AgentSandboxGroup {
			continue
		}
		var served []string
		for _, v := range g.Versions {
			served = append(served, v.Version)
		}
		for _, v := range agentSandboxVersions {
			if slices.Contains(served, v) {
				return schema.GroupVersionResource{Group: AgentSandboxGroup, Version: v, Resource: "sandboxes"}, nil
			}
		}
		return schema.GroupVersionResource{}, fmt.Errorf("kubernetes: agent-sandbox serves %s %v; this version knows %v",
			AgentSandboxGroup, served, agentSandboxVersions)
	}
	return schema.GroupVersionResource{}, ErrNoAgentSandbox
}

// AgentSandbox returns the agent-sandbox Sandbox (of resource gvr, from
// DiscoverAgentSandbox) that makes pod, with its labels and annotations, and
// that the cluster deletes, pod and all, at expires: a sandbox outlives no
// server's expiry even when every server died.
func AgentSandbox(gvr schema.GroupVersionResource, pod *corev1.Pod, expires time.Time) (*unstructured.Unstructured, error) {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod.Spec)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: pod spec: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       "Sandbox",
		"metadata": map[string]any{
			"name": pod.Name, "namespace": pod.Namespace,
			"labels": toAny(pod.Labels), "annotations": toAny(pod.Annotations),
		},
		"spec": map[string]any{
			"podTemplate": map[string]any{
				"metadata": map[string]any{"labels": toAny(pod.Labels), "annotations": toAny(pod.Annotations)},
				"spec":     spec,
			},
			"shutdownTime":   expires.UTC().Format(time.RFC3339),
			"shutdownPolicy": "Delete",
		},
	}}
	return u, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
