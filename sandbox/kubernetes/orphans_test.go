package kubernetes

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// The owner sweep takes a sandbox's NetworkPolicy that no pod ever owned
// (its server died between making it and making the pod) once it is past
// the grace and its labels say its owner is gone; never a policy a pod or
// Sandbox owns, a young one (a create under way), a warm pool's or a
// helper's (no owner label), nor a live owner's.
func TestRemoveOrphanPolicies(t *testing.T) {
	old := metav1.NewTime(time.Now().Add(-2 * policyGrace))
	young := metav1.NewTime(time.Now())
	policy := func(name, owner string, created metav1.Time, owned bool) *networkingv1.NetworkPolicy {
		spec := testSpec()
		spec.Name = name
		spec.Labels = map[string]string{backend.LabelManaged: "true", backend.LabelID: name}
		if owner != "" {
			spec.Labels[backend.LabelOwner] = owner
		}
		pod, err := Pod(spec, Options{Namespace: "ns"})
		if err != nil {
			t.Fatal(err)
		}
		np := DenyAll(pod)
		np.Namespace = "ns"
		np.CreationTimestamp = created
		if owned {
			np.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: name, UID: "u"}}
		}
		return np
	}
	f := fake.NewClientset(
		policy("orphan", "dead", old, false),
		policy("owned", "dead", old, true),
		policy("young", "dead", young, false),
		policy("alive", "live", old, false),
		policy("no-owner", "", old, false),
	)
	b := &Backend{cs: fakeClients(f), log: slog.New(slog.DiscardHandler), namespace: "ns"}
	var asked []string
	removed, err := b.RemoveOrphanVolumes(context.Background(), func(v backend.VolumeInfo) bool {
		asked = append(asked, v.Name)
		return v.Labels[backend.LabelOwner] == "dead"
	})
	if err != nil || !slices.Equal(removed, []string{"orphan"}) {
		t.Fatalf("removed %v, %v; want [orphan]", removed, err)
	}
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"alive", "orphan"}) {
		t.Errorf("asked about %v; want only the old ownerless policies with an owner label", asked)
	}
	left, _ := f.NetworkingV1().NetworkPolicies("ns").List(context.Background(), metav1.ListOptions{})
	var names []string
	for _, np := range left.Items {
		names = append(names, np.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"alive", "no-owner", "owned", "young"}) {
		t.Errorf("left %v", names)
	}
}
