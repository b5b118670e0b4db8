package kubernetes

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// NewTestBackend is testBackend for the external tests: a Backend on the
// test cluster in a namespace of the test's own, or a skip without one.
func NewTestBackend(t *testing.T, cfg Config) *Backend { return testBackend(t, cfg) }

// ReadmeRole makes a namespace of the test's own and a ServiceAccount in
// it bound to the RBAC block of docs/kubernetes.md, waits until the binding is in
// force, and returns a kubeconfig that authenticates as it and the
// namespace.
func ReadmeRole(t *testing.T) (kubeconfig, namespace string) {
	t.Helper()
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, cs)
	kc := bindServiceAccount(ctx, t, cs, cfg, ns, "readme", readRBAC(t))
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	sa := kubernetes.NewForConfigOrDie(rc)
	for {
		_, err := sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			return kc, ns
		}
		if ctx.Err() != nil {
			t.Fatalf("the README's Role is not in force: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
