package kubernetes

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// On the real cluster, with a short lease: a sandbox whose expiry is half
// an hour away has its shutdownTime a lease ahead, renewed while its
// backend lives (it outlives several leases); once the renewals stop (the
// server and its watchdog dead) the cluster removes it within the lease
// and its controller's delay, not at its expiry.
func TestLeaseOnCluster(t *testing.T) {
	const lease = 15 * time.Second
	b := testBackend(t, Config{UseAgentSandbox: "always", RuntimeClass: "gvisor", Lease: lease})
	defer b.StopLeases()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id, err := b.Create(ctx, uniqueSpec(time.Now().Add(30*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	first := shutdownTime(ctx, t, b, id)
	if time.Until(first) > lease+time.Second {
		t.Fatalf("shutdownTime %v: want a lease (%v) ahead, not the expiry", first, lease)
	}
	time.Sleep(2 * lease)
	if later := shutdownTime(ctx, t, b, id); !later.After(first) {
		t.Fatalf("after two leases the shutdownTime is %v (was %v): not renewed", later, first)
	}
	b.StopLeases()
	stopped := time.Now()
	for {
		_, err := b.cs.pods(b.namespace).Get(ctx, id, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Since(stopped) > lease+90*time.Second {
			t.Fatalf("the sandbox is still there %v after its lease stopped being renewed (%v)", time.Since(stopped), err)
		}
		time.Sleep(time.Second)
	}
	t.Logf("removed by the cluster %v after the last renewal stopped", time.Since(stopped).Round(time.Second))
}

// shutdownTime is the Sandbox id's spec.shutdownTime.
func shutdownTime(ctx context.Context, t *testing.T, b *Backend, id string) time.Time {
	t.Helper()
	u, err := b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "shutdownTime")
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		t.Fatalf("shutdownTime %q: %v", v, err)
	}
	return at
}
