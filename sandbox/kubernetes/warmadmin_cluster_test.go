package kubernetes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// A server whose token holds only the runtime Role of docs/kubernetes.md:
// without a pool it makes each sandbox a Sandbox of its own and doctor
// says why; once the admin (here the cluster admin) has made the pool, it
// claims from it; and the token cannot rewrite the pool's template.
func TestRuntimeRoleClaimsAdminPoolOnCluster(t *testing.T) {
	kc, ns := kubernetes.ReadmeRole(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := kubernetes.Config{Kubeconfig: kc, Namespace: ns, UseAgentSandbox: "auto", RuntimeClass: "gvisor", WarmPool: map[string]int{"python": 1}}
	teamBe := kubernetes.NewTestBackend(t, cfg)
	team, _ := clusterEngineOn(t, teamBe, nil)

	// No pool yet, and the Role may not make one.
	sb, err := team.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "team"})
	if err != nil {
		t.Fatalf("create without a pool, as the runtime Role: %v", err)
	}
	if strings.HasPrefix(sb.ContainerID, kubernetes.PoolName("python")+"-") {
		t.Fatalf("pod %s is a pool's, but no pool exists", sb.ContainerID)
	}
	rep := kubernetes.Doctor(ctx, cfg, nil)
	if c := checkNamed(rep, "warm pool"); c == nil || !c.OK || c.Fix == "" || !strings.Contains(c.Detail, "no warm pool mcp-sandbox-python") {
		t.Errorf("doctor without the admin's pool: %+v; want a warning naming the missing pool", c)
	}
	if _, err := team.Stop(ctx, sb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}

	// The admin makes the pool (as any server does with its Role).
	adminCfg := cfg
	adminCfg.Kubeconfig = ""
	admin, _ := clusterEngineOn(t, kubernetes.NewTestBackend(t, adminCfg), nil)
	asb, err := admin.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Stop(ctx, asb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	pools, err := teamBe.WarmPools()
	if err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, pools, kubernetes.PoolName("python"))
	start := time.Now()
	sb, err = team.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "team"})
	if err != nil {
		t.Fatalf("create from the admin's pool, as the runtime Role: %v", err)
	}
	t.Logf("claimed from the admin's pool in %d ms (pod %s)", time.Since(start).Milliseconds(), sb.ContainerID)
	if !strings.HasPrefix(sb.ContainerID, kubernetes.PoolName("python")+"-") {
		t.Errorf("pod %s is not from the admin's pool", sb.ContainerID)
	}
	rep = kubernetes.Doctor(ctx, cfg, nil)
	if c := checkNamed(rep, "warm pool"); c == nil || !c.OK || c.Fix != "" || !strings.Contains(c.Detail, "an admin made") {
		t.Errorf("doctor with the admin's pool: %+v", c)
	}
	if c := checkNamed(rep, "rbac"); c == nil || !c.OK || len(rep.Missing) > 0 {
		t.Errorf("doctor as the runtime Role: rbac %+v, missing %v", c, rep.Missing)
	}

	// The runtime Role's token cannot rewrite the template.
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := kubernetes.DiscoverExtensions(clientset(t).Discovery())
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"podTemplate":{"spec":{"containers":[{"name":"sandbox","image":"busybox"}]}}}}`)
	_, err = dynamic.NewForConfigOrDie(rc).Resource(ext.Templates).Namespace(ns).Patch(ctx, kubernetes.PoolName("python"), types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the runtime Role's token patched the SandboxTemplate: %v; want Forbidden", err)
	}
}

// checkNamed is the first check of rep named name; nil without one.
func checkNamed(rep *kubernetes.Report, name string) *kubernetes.Check {
	for i := range rep.Checks {
		if rep.Checks[i].Name == name {
			return &rep.Checks[i]
		}
	}
	return nil
}
