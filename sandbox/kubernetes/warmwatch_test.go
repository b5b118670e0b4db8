package kubernetes

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

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
		if req.ContainerID == "p-fail" || req.ContainerID == "p-flaky" && slices.Index(f.got, "p-flaky") == len(f.got)-1 {
			return "", errors.New("no cat")
		}
		return backend.Workspace + "/" + agentFilePrefix + req.ContainerID, nil
	})
	return f
}

// ready adds a running pod of the python pool, annotated as given.
func (f *stageFixture) ready(t *testing.T, name string, annotations map[string]string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Annotations: annotations, Labels: map[string]string{LabelWarmPool: PoolName("python")}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: "python"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
	if _, err := f.pods.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f *stageFixture) staged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// requests counts the fake clients' requests of verb.
func (f *stageFixture) requests(verb string) int {
	n := 0
	for _, a := range append(f.dyn.Actions(), f.pods.Actions()...) {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

// The staging loop stages each ready pool pod once as it becomes ready,
// driven by its watch (one LIST, however long it waits), skips a pod
// another server staged (not one whose copy began too long ago), marks
// the pods it stages with its id and file,
// and Close stops it: no goroutine is left (synctest.Test fails on one),
// and nothing is staged after.
func TestStageLoopWatchesUntilClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newStageFixture()
		f.ready(t, "p-a", nil)
		f.b.kickStaging()
		synctest.Wait()
		f.ready(t, "p-b", nil)
		f.ready(t, "p-c", map[string]string{AnnotationStagedBy: "another /workspace/.mcp-sandbox-agent-x"})
		// A mark whose copy began long ago: its server died during it.
		f.ready(t, "p-d", map[string]string{AnnotationStagedBy: "dead @1000"})
		f.ready(t, "p-fail", nil)
		synctest.Wait()
		time.Sleep(5 * time.Minute) // an idle pool
		synctest.Wait()
		if got := f.staged(); !slices.Equal(got, []string{"p-a", "p-b", "p-d", "p-fail", "p-fail", "p-fail"}) {
			t.Errorf("staged %v, want p-a, p-b, p-d, p-fail and its two more tries (p-c is another server's)", got)
		}
		if n := f.requests("list"); n != 1 {
			t.Errorf("%d LISTs of the pool pods in 5 idle minutes, want 1 (then a watch)", n)
		}
		p, err := f.pods.CoreV1().Pods("ns").Get(context.Background(), "p-b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := f.b.stg.id + " " + backend.Workspace + "/" + agentFilePrefix + "p-b"; p.Annotations[AnnotationStagedBy] != want {
			t.Errorf("p-b marked %q, want %q", p.Annotations[AnnotationStagedBy], want)
		}
		if !f.b.stg.has("p-b") || f.b.stg.has("p-c") || f.b.stg.has("p-fail") {
			t.Error("p-b's copy is this backend's, p-c and p-fail have none of it")
		}
		p, err = f.pods.CoreV1().Pods("ns").Get(context.Background(), "p-fail", metav1.GetOptions{})
		if err != nil || p.Annotations[AnnotationStagedBy] != "" {
			t.Errorf("a failed copy left its mark: %v %v", p.Annotations, err)
		}
		f.b.Close()
		f.ready(t, "p-e", nil)
		f.b.kickStaging() // after Close: nothing starts
		synctest.Wait()
		if got := f.staged(); len(got) != 6 {
			t.Errorf("staged after Close: %v", got)
		}
	})
}

// A mark left by a server that died during its copy lapses by itself: the
// pod is staged once the mark's time is up, without a change of it. A
// mark whose patch got no answer (applied, then the connection cut) is
// taken off at once, and the pod staged on that change; taking a mark
// off leaves another server's.
func TestStageMarkLapsedOrUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newStageFixture()
		cut := true
		f.pods.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			pa := a.(k8stesting.PatchAction)
			if pa.GetName() != "p-cut" || !cut {
				return false, nil, nil
			}
			cut = false
			if _, _, err := k8stesting.ObjectReaction(f.pods.Tracker())(a); err != nil {
				t.Errorf("the cut patch: %v", err)
			}
			return true, nil, errors.New("connection reset by peer")
		})
		f.ready(t, "p-dead", map[string]string{AnnotationStagedBy: "dead @" + strconv.FormatInt(time.Now().Unix(), 10)})
		f.ready(t, "p-cut", nil)
		f.b.kickStaging()
		synctest.Wait()
		if got := f.staged(); !slices.Equal(got, []string{"p-cut"}) {
			t.Errorf("staged %v at once, want p-cut (p-dead's mark holds for %s)", got, 2*stageTimeout)
		}
		time.Sleep(2*stageTimeout + time.Second)
		synctest.Wait()
		if got := f.staged(); !slices.Equal(got, []string{"p-cut", "p-dead"}) {
			t.Errorf("staged %v once p-dead's mark lapsed, want p-cut, p-dead", got)
		}
		for _, name := range []string{"p-cut", "p-dead"} {
			p, err := f.pods.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
			if want := f.b.stg.id + " " + backend.Workspace + "/" + agentFilePrefix + name; err != nil || p.Annotations[AnnotationStagedBy] != want {
				t.Errorf("%s marked %q (%v), want %q", name, p.Annotations[AnnotationStagedBy], err, want)
			}
		}
		f.b.unmark(context.Background(), "p-dead", "dead @1")
		if p, err := f.pods.CoreV1().Pods("ns").Get(context.Background(), "p-dead", metav1.GetOptions{}); err != nil || p.Annotations[AnnotationStagedBy] == "" {
			t.Errorf("an unmark for another copy took this backend's mark off: %v %v", p.Annotations, err)
		}
		f.b.Close()
	})
}

// A copy that fails is tried again copyRetry later, copyTries times in
// all; until a copy is done the pod has none (a claim copies the agent
// itself).
func TestStageFailedCopyTriedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newStageFixture()
		f.ready(t, "p-flaky", nil) // its first copy fails
		f.ready(t, "p-fail", nil)  // every copy fails
		f.b.kickStaging()
		synctest.Wait()
		if f.b.stg.has("p-flaky") || f.b.stg.has("p-fail") {
			t.Error("a failed copy counts as staged")
		}
		time.Sleep(copyRetry - time.Second)
		synctest.Wait()
		if got := f.staged(); len(got) != 2 {
			t.Errorf("copies %v before copyRetry, want one each", got)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !f.b.stg.has("p-flaky") {
			t.Errorf("p-flaky not staged on its second try: copies %v", f.staged())
		}
		p, err := f.pods.CoreV1().Pods("ns").Get(context.Background(), "p-flaky", metav1.GetOptions{})
		if want := f.b.stg.id + " " + backend.Workspace + "/" + agentFilePrefix + "p-flaky"; err != nil || p.Annotations[AnnotationStagedBy] != want {
			t.Errorf("p-flaky marked %q (%v), want %q", p.Annotations[AnnotationStagedBy], err, want)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		n := 0
		for _, pod := range f.staged() {
			if pod == "p-fail" {
				n++
			}
		}
		if n != copyTries {
			t.Errorf("p-fail copied %d times in 10 minutes, want %d (copies %v)", n, copyTries, f.staged())
		}
		f.b.Close()
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
