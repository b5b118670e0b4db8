package kubernetes

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// stageFixture is a backend on fake clients whose python pool is ensured,
// and whose engine's copy notes the pods it stages.
type stageFixture struct {
	b    *Backend
	dyn  *dynamicfake.FakeDynamicClient
	pods *fake.Clientset
	gvr  schema.GroupVersionResource
	mu   sync.Mutex
	got  []string // the pods staged, in order
}

func newStageFixture() *stageFixture {
	f := &stageFixture{gvr: schema.GroupVersionResource{Group: AgentSandboxGroup, Version: "v1beta1", Resource: "sandboxes"}}
	f.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{f.gvr: "SandboxList"})
	f.pods = fake.NewClientset()
	f.b = &Backend{cs: fakeClients(f.pods), dyn: f.dyn, log: slog.New(slog.DiscardHandler), namespace: "ns"}
	f.b.warm.pools = NewWarmPools(f.dyn, f.gvr, Extensions{}, "ns")
	f.b.warm.templates = map[string]string{"python": "{}"}
	f.b.StageAgents(func(_ context.Context, req backend.StageRequest) (string, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.got = append(f.got, req.ContainerID)
		return backend.Workspace + "/" + agentFilePrefix + req.ContainerID, nil
	})
	return f
}

// ready adds a ready Sandbox of the python pool and its running pod,
// annotated as given.
func (f *stageFixture) ready(t *testing.T, name string, annotations map[string]string) {
	t.Helper()
	ctx := context.Background()
	yes := true
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": AgentSandboxGroup + "/v1beta1", "kind": "Sandbox",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}}
	u.SetOwnerReferences([]metav1.OwnerReference{{Kind: "SandboxWarmPool", Name: PoolName("python"), Controller: &yes}})
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: "python"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
	if _, err := f.pods.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.dyn.Resource(f.gvr).Namespace("ns").Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f *stageFixture) staged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// requests counts the fake dynamic client's requests of verb.
func (f *stageFixture) requests(verb string) int {
	n := 0
	for _, a := range f.dyn.Actions() {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

// The staging loop stages each ready pool pod once as it becomes ready,
// driven by its watch (one LIST, however long it waits), skips a pod
// another server marked, marks the pods it stages with its id and file,
// and Close stops it: no goroutine is left (synctest.Test fails on one),
// and nothing is staged after.
func TestStageLoopWatchesUntilClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newStageFixture()
		f.ready(t, "p-a", nil)
		f.b.kickStaging()
		synctest.Wait()
		f.ready(t, "p-b", nil)
		f.ready(t, "p-c", map[string]string{AnnotationStagedBy: "another"})
		synctest.Wait()
		time.Sleep(5 * time.Minute) // an idle pool
		synctest.Wait()
		if got := f.staged(); !slices.Equal(got, []string{"p-a", "p-b"}) {
			t.Errorf("staged %v, want p-a then p-b (p-c is another server's)", got)
		}
		if n := f.requests("list"); n != 1 {
			t.Errorf("%d LISTs of the Sandboxes in 5 idle minutes, want 1 (then a watch)", n)
		}
		p, err := f.pods.CoreV1().Pods("ns").Get(context.Background(), "p-b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := f.b.stg.id + " " + backend.Workspace + "/" + agentFilePrefix + "p-b"; p.Annotations[AnnotationStagedBy] != want {
			t.Errorf("p-b marked %q, want %q", p.Annotations[AnnotationStagedBy], want)
		}
		if !f.b.stg.has("p-b") || f.b.stg.has("p-c") {
			t.Error("p-b's copy is this backend's, p-c has none of it")
		}
		f.b.Close()
		f.ready(t, "p-d", nil)
		f.b.kickStaging() // after Close: nothing starts
		synctest.Wait()
		if got := f.staged(); len(got) != 2 {
			t.Errorf("staged after Close: %v", got)
		}
	})
}

// A server whose staging loop never started closes at once.
func TestCloseWithoutStaging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Backend{}
		b.Close()
		b.Close()
	})
}
