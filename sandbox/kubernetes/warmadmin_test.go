package kubernetes

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A template the cluster holds matches the one the server would write when
// it holds every field the server writes, defaults the cluster added
// aside, numbers whatever their Go type.
func TestSpecEqual(t *testing.T) {
	obj := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	}
	want := obj(map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"n": int64(3), "image": "python:3"}}, "envVarsInjectionPolicy": "Disallowed"})
	for _, c := range []struct {
		name string
		have map[string]any
		ok   bool
	}{
		{"same, a default added", map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"n": float64(3), "image": "python:3"}}, "envVarsInjectionPolicy": "Disallowed", "volumeClaimTemplatesPolicy": "Disallowed"}, true},
		{"another image", map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"n": int64(3), "image": "evil:1"}}, "envVarsInjectionPolicy": "Disallowed"}, false},
		{"a field missing", map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"n": int64(3), "image": "python:3"}}}, false},
		{"volume claims added", map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"n": int64(3), "image": "python:3"}}, "envVarsInjectionPolicy": "Disallowed", "volumeClaimTemplates": []any{}}, false},
		{"an extra pod field", map[string]any{"podTemplate": map[string]any{"spec": map[string]any{"n": int64(3), "image": "python:3", "hostNetwork": true}}, "envVarsInjectionPolicy": "Disallowed"}, false},
	} {
		if got := specEqual(obj(c.have), want); got != c.ok {
			t.Errorf("%s: %v, want %v", c.name, got, c.ok)
		}
	}
}
