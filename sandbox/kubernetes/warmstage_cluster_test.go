package kubernetes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// Two servers sharing a warm pool of 2: each ready pod of the pool gets
// the agent copied in once (by one of them, named on the pod); the one
// that claims a pod the other staged removes that unused copy; once a
// backend is closed its staging makes no request while the pool changes.
func TestStageSharedPoolOnCluster(t *testing.T) {
	kc := kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor", WarmPool: map[string]int{"python": 2}}
	be1 := kubernetes.NewTestBackend(t, kc)
	kc.Namespace = be1.Namespace()
	be2 := kubernetes.NewTestBackend(t, kc)
	req1 := be1.CountRequests(t)
	cc1 := &copyCounter{Backend: be1, copies: map[string][]time.Time{}}
	cc2 := &copyCounter{Backend: be2, copies: map[string][]time.Time{}}
	eng1, _, close1 := clusterEngineClosable(t, cc1, nil)
	t.Cleanup(close1)
	eng2, _ := clusterEngineOnBackend(t, cc2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	for _, eng := range []*sandbox.Engine{eng1, eng2} { // each ensures the pool
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "stage"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Stop(ctx, sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := poolStaged(ctx, t, be1.Namespace(), 2)
	for _, p := range pods {
		if n := cc1.count(p.Name) + cc2.count(p.Name); n != 1 {
			t.Errorf("pod %s: the agent copied in %d times, want once (staged-by %q)", p.Name, n, p.Annotations[kubernetes.AnnotationStagedBy])
		}
	}
	t.Logf("staged: %v", stagedBy(pods))
	// Taking a copy's mark off leaves another's: the API server answers
	// the failed test of the JSON patch as invalid.
	if err := be2.UnmarkPatch(ctx, pods[0].Name, be2.StagerID()+" @1"); !apierrors.IsInvalid(err) {
		t.Errorf("unmark of another's mark: %v, want the API server's invalid", err)
	}
	if p, err := clientset(t).CoreV1().Pods(be1.Namespace()).Get(ctx, pods[0].Name, metav1.GetOptions{}); err != nil || p.Annotations[kubernetes.AnnotationStagedBy] != pods[0].Annotations[kubernetes.AnnotationStagedBy] {
		t.Errorf("pod %s's mark after another's unmark: %v (%v)", pods[0].Name, p.Annotations, err)
	}
	claimForeign(ctx, t, eng2, be2)

	// Closed, a backend's staging asks nothing while the pool refills.
	close1()
	t.Logf("requests of server 1 (one create) while the two shared the pool: %v", req1.Counts())
	be1.Close()
	before := req1.Counts()
	churn(ctx, t, eng2, be2.Namespace())
	if after := req1.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("requests of a closed backend: %v, then %v", before, after)
	}
	markLapses(ctx, t, eng2, cc2)
}

// markLapses has a refill pod of the pool marked, before it runs, as a
// server that died during its copy leaves it (its copy begun 50 s ago),
// and checks that the server left stages it when the mark lapses (10 s
// on), not at a later change of the pod (there may be none).
func markLapses(ctx context.Context, t *testing.T, eng *sandbox.Engine, cc *copyCounter) {
	t.Helper()
	ns, pods := cc.Namespace(), clientset(t).CoreV1().Pods(cc.Namespace())
	sel := metav1.ListOptions{LabelSelector: kubernetes.LabelWarmPool + "=" + kubernetes.PoolName("python")}
	list, err := pods.List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, p := range list.Items {
		old[p.Name] = true
	}
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "stage"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = eng.Stop(context.WithoutCancel(ctx), sb.ID, sandbox.StopRequest{}) }()
	// The refill pod, marked while it is not running yet (under its
	// resourceVersion: the kubelet's status writes race the mark).
	var refill string
	var marked time.Time
	for deadline := time.Now().Add(time.Minute); refill == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, err := pods.List(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Items {
			if old[p.Name] || p.Status.Phase == corev1.PodRunning || p.Annotations[kubernetes.AnnotationStagedBy] != "" {
				continue
			}
			marked = time.Now().Add(-50 * time.Second)
			mark := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:"ghost @%d"}}}`, p.ResourceVersion, kubernetes.AnnotationStagedBy, marked.Unix())
			if _, err := pods.Patch(ctx, p.Name, types.MergePatchType, mark, metav1.PatchOptions{}); err == nil {
				refill = p.Name
				break
			}
		}
	}
	if refill == "" {
		t.Log("no refill pod caught before it ran: the lapse of a dead server's mark not checked this time")
		return
	}
	for _, p := range poolStaged(ctx, t, ns, 2) {
		if p.Name != refill {
			continue
		}
		by, _, _ := strings.Cut(p.Annotations[kubernetes.AnnotationStagedBy], " ")
		if by != cc.StagerID() || cc.count(refill) != 1 {
			t.Errorf("pod %s, marked by a dead server: staged by %q (the server left is %q), copied in %d times", refill, by, cc.StagerID(), cc.count(refill))
			return
		}
		// The mark lapses 60 s after it was made (its whole seconds):
		// the copy begins then, not at some later change of the pod.
		if at := cc.firstCopy(refill).Sub(marked); at < 59*time.Second || at > 90*time.Second {
			t.Errorf("pod %s copied into %s after the dead server's mark, want when it lapsed (60 s)", refill, at)
		}
		t.Logf("pod %s marked by a dead server, staged by the one left %s after the mark", refill, cc.firstCopy(refill).Sub(marked).Round(time.Second))
		return
	}
	t.Errorf("pod %s, marked by a dead server: not among the pool's ready pods", refill)
}

// poolStaged waits until at least n of the pool's pods are ready,
// unclaimed and each staged (its staged-by names a file), and returns them.
func poolStaged(ctx context.Context, t *testing.T, ns string, n int) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		list, err := clientset(t).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelWarmPool + "=" + kubernetes.PoolName("python")})
		var staged []corev1.Pod
		var seen []string
		for _, p := range list.Items {
			if p.Annotations[kubernetes.AnnotationClaim] != "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			by := p.Annotations[kubernetes.AnnotationStagedBy]
			seen = append(seen, p.Name+"="+by)
			if _, file, _ := strings.Cut(by, " "); strings.HasPrefix(file, "/") { // not "@…": copying
				staged = append(staged, p)
			}
		}
		if err == nil && len(staged) >= n && len(staged) == len(seen) {
			return staged
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool's pods not staged after 3 minutes: %v (err %v)", seen, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// claimForeign claims from the pool with eng (on be) until it gets a pod
// the other server staged, and checks that pod's copy goes and the
// sandbox's commands run.
func claimForeign(ctx context.Context, t *testing.T, eng *sandbox.Engine, be *kubernetes.Backend) {
	t.Helper()
	for round := range 4 {
		ready := poolStaged(ctx, t, be.Namespace(), 2)
		var foreign string
		for _, p := range ready {
			if by, file, _ := strings.Cut(p.Annotations[kubernetes.AnnotationStagedBy], " "); by != be.StagerID() {
				foreign = p.Name + " " + file
			}
		}
		pod, file, _ := strings.Cut(foreign, " ")
		// Its own staged pods go first: claim them all, the foreign one
		// too if there is one.
		var ids []string
		claimed := false
		for range ready {
			sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "stage"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, sb.ID)
			if sb.ContainerID == pod {
				t.Logf("claimed %s, staged by the other server", pod)
				foreignGone(ctx, t, eng, be, sb, file)
				claimed = true
			}
		}
		for _, id := range ids {
			_, _ = eng.Stop(ctx, id, sandbox.StopRequest{})
		}
		if claimed {
			return
		}
		t.Logf("round %d: no claim of a pod the other server staged", round)
	}
	t.Error("no claim of a pod the other server staged in 4 rounds")
}

// foreignGone checks that the other server's file leaves the claimed
// sandbox sb within 30 s, and that its commands run.
func foreignGone(ctx context.Context, t *testing.T, eng *sandbox.Engine, be *kubernetes.Backend, sb sandbox.CreateResult, file string) {
	t.Helper()
	if res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "echo hi"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec in %s: %v %+v", sb.ID, err, res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := be.Exec(ctx, sb.ContainerID, backend.ExecSpec{Cmd: []string{"test", "-e", file}})
		if err == nil && st.ExitCode == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: the other server's copy %s is still there after 30 s (%v %+v)", sb.ContainerID, file, err, st)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// churn has the pool's pods change: a claim, and its refill staged.
func churn(ctx context.Context, t *testing.T, eng *sandbox.Engine, ns string) {
	t.Helper()
	poolStaged(ctx, t, ns, 2)
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "stage"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = eng.Stop(context.WithoutCancel(ctx), sb.ID, sandbox.StopRequest{}) }()
	time.Sleep(time.Second)
	poolStaged(ctx, t, ns, 2)
}

// firstCopy is when the agent was first copied into pod.
func (c *copyCounter) firstCopy(pod string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.copies[pod]) == 0 {
		return time.Time{}
	}
	return c.copies[pod][0]
}

// count is the number of the agent's copies into pod.
func (c *copyCounter) count(pod string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.copies[pod])
}

func stagedBy(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+": "+p.Annotations[kubernetes.AnnotationStagedBy])
	}
	return out
}
