package kubernetes_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// A one-shot run_code (no sandbox_id) runs in a sandbox claimed from the
// language's warm pool: a Sandbox of the pool passes to a SandboxClaim,
// and no Sandbox of its own is made. Its time is printed, not asserted.
func TestWarmPoolRunCodeOnCluster(t *testing.T) {
	eng, be, _ := clusterEngineWith(t, kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor", WarmPool: map[string]int{"python": 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	gvr, err := kubernetes.DiscoverAgentSandbox(clientset(t).Discovery())
	if err != nil {
		t.Fatal(err)
	}
	pools, err := be.WarmPools()
	if err != nil {
		t.Fatal(err)
	}
	// The first run makes the pool (its own claim may start cold).
	if _, err := eng.RunCode(ctx, sandbox.RunCodeRequest{Language: "python", Code: "print(1)"}); err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, pools, kubernetes.PoolName("python"))
	sbs := dynamic.NewForConfigOrDie(rc).Resource(gvr).Namespace(be.Namespace())
	list, err := sbs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sbs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	run, err := eng.RunCode(ctx, sandbox.RunCodeRequest{Language: "python", Code: "print(6 * 7)"})
	if err != nil || strings.TrimSpace(run.Stdout) != "42" {
		t.Fatalf("one-shot run_code = %+v, %v; want 42", run, err)
	}
	t.Logf("one-shot run_code from the warm pool: %d ms", time.Since(start).Milliseconds())
	adopted, own := "", ""
	for adopted == "" && own == "" {
		select {
		case ev := <-w.ResultChan():
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			kind := controllerKind(u)
			switch {
			case ev.Type == watch.Added && kind != "SandboxWarmPool":
				own = u.GetName()
			case kind == "SandboxClaim" && strings.HasPrefix(u.GetName(), kubernetes.PoolName("python")+"-"):
				adopted = u.GetName()
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the one-shot run_code neither claimed a pool sandbox nor made one of its own")
		}
	}
	if own != "" {
		t.Fatalf("the one-shot run_code made Sandbox %s of its own, not one claimed from the warm pool", own)
	}
}

// controllerKind is the kind of u's controller ("" without one).
func controllerKind(u *unstructured.Unstructured) string {
	for _, o := range u.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return o.Kind
		}
	}
	return ""
}
