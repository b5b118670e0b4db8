package kubernetes_test

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// kubernetes.cpu_request is what the cluster stores as the CPU request of
// a pod made directly (javascript), of the python warm pool's
// SandboxTemplate, and of the pod claimed from that pool.
func TestCPURequestOnCluster(t *testing.T) {
	be := kubernetes.NewTestBackend(t, kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor", WarmPool: map[string]int{"python": 1}, CPURequest: "30m"})
	eng, _ := clusterEngineOn(t, be, func(c *config.Config) { c.Images.JavaScript = "mcp-sandbox-test/node:18" })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	want := resource.MustParse("30m")
	for _, lang := range []string{"javascript", "python"} {
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: lang})
		if err != nil {
			t.Fatalf("Create %s: %v", lang, err)
		}
		pod, err := clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, sb.ContainerID, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := pod.Spec.Containers[0].Resources.Requests.Cpu(); got.Cmp(want) != 0 {
			t.Errorf("%s sandbox's pod requests %s CPU, want cpu_request's %s", lang, got, want.String())
		}
	}
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := kubernetes.DiscoverExtensions(clientset(t).Discovery())
	if err != nil {
		t.Fatal(err)
	}
	u, err := dynamic.NewForConfigOrDie(rc).Resource(ext.Templates).Namespace(be.Namespace()).Get(ctx, kubernetes.PoolName("python"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "podTemplate", "spec", "containers")
	var got string
	if len(containers) == 1 {
		got, _, _ = unstructured.NestedString(containers[0].(map[string]any), "resources", "requests", "cpu")
	}
	if q, err := resource.ParseQuantity(got); err != nil || q.Cmp(want) != 0 {
		t.Errorf("the warm pool's SandboxTemplate requests %q CPU, want %s", got, want.String())
	}
}
