package kubernetes

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// EngineArch asks the cluster once (every agent's start needs it); a
// Role that may not list nodes is asked once too; another error is asked
// again next time.
func TestEngineArchAskedOnce(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{Architecture: "arm64"}}}
	for _, c := range []struct {
		name      string
		err       error
		wantAsked int
	}{
		{"answered", nil, 1},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", nil), 1},
		{"unavailable", apierrors.NewServiceUnavailable("busy"), 3},
	} {
		f := fake.NewClientset(node)
		asked := 0
		f.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			asked++
			return c.err != nil, nil, c.err
		})
		b := &Backend{cs: fakeClients(f)}
		for range 3 {
			a, err := b.EngineArch(ctx)
			if (err == nil) != (c.err == nil) || (err == nil && a != "arm64") {
				t.Errorf("%s: EngineArch = %q, %v", c.name, a, err)
			}
		}
		if asked != c.wantAsked {
			t.Errorf("%s: the cluster was asked %d times for 3 calls, want %d", c.name, asked, c.wantAsked)
		}
	}
}
