package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// On the real cluster: as admin every check is green; as a ServiceAccount
// bound to the RBAC block of docs/kubernetes.md, too; bound to that Role without
// pods/exec, doctor fails naming the two pods/exec verbs.
func TestDoctorOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, cs)
	labelRestricted(ctx, t, cs, ns)
	base := Config{Kubeconfig: os.Getenv(clusterEnv), Namespace: ns, RuntimeClass: "gvisor", UseAgentSandbox: "auto", WarmPool: map[string]int{"python": 1}}

	t.Run("admin", func(t *testing.T) {
		r := Doctor(ctx, base, nil, ImageProbe{Language: "python", Image: "mcp-sandbox-test/python:3", Program: "python3", Pull: "never", Setting: "images.python"})
		wantGreen(t, r)
		if i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Name == "image python" }); i < 0 {
			t.Errorf("no image check: %+v", r.Checks)
		}
		if i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Name == "metrics" }); i < 0 || strings.Contains(r.Checks[i].Detail, "not served") == r.Metrics {
			t.Errorf("metrics %v, checks %+v: want a metrics check saying so", r.Metrics, r.Checks)
		}
		if r.Context != "mcp-sandbox-k8s" || !r.UsesAgentSandbox || r.AgentSandbox != AgentSandboxGroup+"/v1beta1" || r.Extensions != ExtensionsGroup+"/v1beta1" || r.Version == "" {
			t.Errorf("report %+v", r)
		}
	})
	rbac := readRBAC(t)
	t.Run("the README's Role", func(t *testing.T) {
		c := base
		c.Kubeconfig = bindServiceAccount(ctx, t, cs, cfg, ns, "readme", rbac)
		r := waitDoctor(ctx, t, c, func(r *Report) bool { return r.OK })
		wantGreen(t, r)
	})
	t.Run("no pods/exec", func(t *testing.T) {
		noExec := rbac
		noExec.role = *rbac.role.DeepCopy()
		for i, rule := range noExec.role.Rules {
			noExec.role.Rules[i].Resources = slices.DeleteFunc(slices.Clone(rule.Resources), func(r string) bool { return r == "pods/exec" })
		}
		c := base
		c.Kubeconfig = bindServiceAccount(ctx, t, cs, cfg, ns, "noexec", noExec)
		// Wait for the binding to take effect (pods get allowed), then read.
		r := waitDoctor(ctx, t, c, func(r *Report) bool { return !slices.Contains(r.Missing, "get pods") })
		if r.OK {
			t.Fatalf("doctor is green without pods/exec: %+v", r)
		}
		if !slices.Equal(r.Missing, []string{"create pods/exec", "get pods/exec"}) {
			t.Errorf("missing %v, want the two pods/exec verbs", r.Missing)
		}
		if i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Name == "rbac" }); i < 0 || r.Checks[i].OK || !strings.Contains(r.Checks[i].Detail, "create pods/exec") {
			t.Errorf("rbac check %+v", r.Checks)
		}
	})
	t.Run("no metrics rule: a warning, not a failure", func(t *testing.T) {
		noMetrics := rbac
		noMetrics.role = *rbac.role.DeepCopy()
		noMetrics.role.Rules = slices.DeleteFunc(noMetrics.role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, MetricsGroup)
		})
		c := base
		c.Kubeconfig = bindServiceAccount(ctx, t, cs, cfg, ns, "nometrics", noMetrics)
		r := waitDoctor(ctx, t, c, func(r *Report) bool { return r.OK })
		if !r.Metrics {
			t.Skip("the cluster serves no metrics API")
		}
		if len(r.Missing) != 0 || !slices.Equal(r.MissingOptional, []string{"get pods." + MetricsGroup}) {
			t.Errorf("missing %v, optional %v; want only the metrics read, as optional", r.Missing, r.MissingOptional)
		}
		i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Name == "metrics" })
		if i < 0 || !r.Checks[i].OK || !strings.Contains(r.Checks[i].Detail, "may not read it") || r.Checks[i].Fix == "" {
			t.Errorf("metrics check %+v", r.Checks)
		}
	})
	t.Run("plain pods need no agent-sandbox rules", func(t *testing.T) {
		plain := rbac
		plain.role = *rbac.role.DeepCopy()
		plain.role.Rules = slices.DeleteFunc(plain.role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, AgentSandboxGroup) || slices.Contains(r.APIGroups, ExtensionsGroup)
		})
		c := base
		c.UseAgentSandbox, c.WarmPool = "never", nil
		c.Kubeconfig = bindServiceAccount(ctx, t, cs, cfg, ns, "plain", plain)
		r := waitDoctor(ctx, t, c, func(r *Report) bool { return r.OK })
		wantGreen(t, r)
		if r.UsesAgentSandbox {
			t.Errorf("use_agent_sandbox never, yet it would be used: %+v", r)
		}
		c.UseAgentSandbox = "auto"
		if r := Doctor(ctx, c, nil); r.OK || !slices.Contains(r.Missing, "create sandboxes.agents.x-k8s.io") {
			t.Errorf("auto on a cluster with agent-sandbox, without its rules: %+v", r)
		}
	})
	t.Run("missing RuntimeClass", func(t *testing.T) {
		c := base
		c.RuntimeClass = "no-such-class"
		r := Doctor(ctx, c, nil)
		i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Name == "runtime class" })
		if r.OK || i < 0 || r.Checks[i].OK || !strings.Contains(r.Checks[i].Detail, `"no-such-class" does not exist`) {
			t.Errorf("report %+v", r)
		}
	})
}

// On the real cluster, doctor is red naming the cause for a namespace
// without Pod Security "restricted", an image no node has, and an image
// without its language's runner; the probe pods go.
func TestDoctorImagesOnCluster(t *testing.T) {
	cs, _ := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, cs)
	base := Config{Kubeconfig: os.Getenv(clusterEnv), Namespace: ns, RuntimeClass: "gvisor", UseAgentSandbox: "never"}
	r := Doctor(ctx, base, nil,
		ImageProbe{Language: "python", Image: "mcp-sandbox-test/python:3", Program: "python3", Pull: "never", Setting: "images.python"},
		ImageProbe{Language: "bash", Image: "mcp-sandbox-test/busybox:1", Program: "bash", Pull: "never", Setting: "images.bash"},
		ImageProbe{Language: "javascript", Image: "mcp-sandbox-test/no-such:1", Program: "node", Pull: "never", Setting: "images.javascript"})
	want := map[string]string{
		"pod security":     "pod-security.kubernetes.io/enforce=restricted",
		"image bash":       "bash is not in the image",
		"image javascript": "nodes cannot get the image",
	}
	for _, c := range r.Checks {
		w, bad := want[c.Name]
		switch {
		case bad && (c.OK || !strings.Contains(c.Detail+" "+c.Fix, w) || c.Fix == ""):
			t.Errorf("check %+v: want it red with %q and a fix", c, w)
		case !bad && !c.OK:
			t.Errorf("check %+v: want it green", c)
		}
		delete(want, c.Name)
	}
	if r.OK || len(want) > 0 {
		t.Errorf("report OK %v, checks not made: %v", r.OK, want)
	}
	labelRestricted(ctx, t, cs, ns)
	if r := Doctor(ctx, base, nil); !r.OK {
		t.Errorf("labelled restricted, doctor is red: %+v", r.Checks)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelDoctorProbe})
	if err != nil || len(pods.Items) > 0 && pods.Items[0].DeletionTimestamp == nil {
		t.Errorf("probe pods left: %v, %v", pods, err)
	}
}

// On the real cluster, two teams apply the namespace recipe of
// docs/kubernetes.md (the second with its namespace replaced, as the docs
// say): doctor is green as each team's ServiceAccount, and the second
// apply leaves the first team's bindings as they were.
func TestNamespaceRecipeOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var teams []readmeRBAC
	for range 2 {
		r := readRBACFor(t, "mcp-sandbox-team-"+randomHex(4))
		applyRecipe(ctx, t, cs, r)
		teams = append(teams, r)
	}
	for i, r := range teams {
		ns := r.namespace.Name
		kc := tokenKubeconfig(ctx, t, cs, cfg, ns, r.serviceAccount.Name)
		if i == 1 {
			kc = teamKubeconfig(ctx, t, ns, r.serviceAccount.Name) // mcp-sandbox kube-config's
		}
		c := Config{Kubeconfig: kc, Namespace: ns,
			RuntimeClass: "gvisor", UseAgentSandbox: "auto", WarmPool: map[string]int{"python": 1}}
		waitDoctor(ctx, t, c, func(r *Report) bool { return r.OK })
		rep := Doctor(ctx, c, nil, ImageProbe{Language: "python", Image: "mcp-sandbox-test/python:3", Program: "python3", Pull: "never", Setting: "images.python"})
		wantGreen(t, rep)
		if len(rep.Checks) < 7 {
			t.Errorf("checks %+v: want the pod security and image checks too", rep.Checks)
		}
	}
	first := teams[0]
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, first.clusterRoleBinding.Name, metav1.GetOptions{})
	if err != nil || !slices.Equal(crb.Subjects, first.clusterRoleBinding.Subjects) {
		t.Errorf("the first team's ClusterRoleBinding after the second's apply: %v, %v; want subjects %v", crb, err, first.clusterRoleBinding.Subjects)
	}
	rb, err := cs.RbacV1().RoleBindings(first.namespace.Name).Get(ctx, first.binding.Name, metav1.GetOptions{})
	if err != nil || !slices.Equal(rb.Subjects, first.binding.Subjects) {
		t.Errorf("the first team's RoleBinding: %v, %v", rb, err)
	}
}

// teamKubeconfig is Backend.TeamKubeconfig's kubeconfig for the
// ServiceAccount sa of ns, made as the admin, in a file of the test's.
func teamKubeconfig(ctx context.Context, t *testing.T, ns, sa string) string {
	t.Helper()
	admin, err := New(ctx, Config{Kubeconfig: os.Getenv(clusterEnv)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := admin.TeamKubeconfig(ctx, ns, sa, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ns+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// applyRecipe creates the recipe's objects as the cluster admin, and
// deletes them (the namespace with what is in it) after the test.
func applyRecipe(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, r readmeRBAC) {
	t.Helper()
	ns, rbac := r.namespace.Name, cs.RbacV1()
	t.Cleanup(func() {
		bg := context.Background()
		_ = rbac.ClusterRoleBindings().Delete(bg, r.clusterRoleBinding.Name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(bg, r.clusterRole.Name, metav1.DeleteOptions{})
		_ = cs.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{})
	})
	var errs []error
	_, err := cs.CoreV1().Namespaces().Create(ctx, &r.namespace, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &r.serviceAccount, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rbac.Roles(ns).Create(ctx, &r.role, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rbac.RoleBindings(ns).Create(ctx, &r.binding, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rbac.ClusterRoles().Create(ctx, &r.clusterRole, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rbac.ClusterRoleBindings().Create(ctx, &r.clusterRoleBinding, metav1.CreateOptions{})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("apply the recipe for %s: %v", ns, err)
	}
}

// labelRestricted labels ns pod-security.kubernetes.io/enforce=restricted,
// as docs/kubernetes.md asks.
func labelRestricted(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, ns string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"restricted"}}}`, LabelEnforce)
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func wantGreen(t *testing.T, r *Report) {
	t.Helper()
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("check %s: %s (fix: %s)", c.Name, c.Detail, c.Fix)
		}
	}
	if !r.OK || len(r.Missing) > 0 || len(r.Checks) < 4 {
		t.Errorf("report %+v", r)
	}
}

// waitDoctor runs Doctor until done holds (RBAC bindings take a moment to
// reach the authorizer), for up to 20 s, and returns its last report.
func waitDoctor(ctx context.Context, t *testing.T, c Config, done func(*Report) bool) *Report {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := Doctor(ctx, c, nil)
		if done(r) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bindServiceAccount makes the ServiceAccount name in ns, applies the
// RBAC objects to it (the Role in ns, the ClusterRole and its binding
// named after ns and name, deleted after the test), and returns a
// kubeconfig that authenticates as it with a short-lived token.
func bindServiceAccount(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, cfg *rest.Config, ns, name string, rb readmeRBAC) string {
	t.Helper()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
	role, binding := rb.role.DeepCopy(), rb.binding.DeepCopy()
	role.Namespace, role.Name = ns, name
	binding.Namespace, binding.Name, binding.RoleRef.Name, binding.Subjects = ns, name, name, subject
	cr, crb := rb.clusterRole.DeepCopy(), rb.clusterRoleBinding.DeepCopy()
	cluster := ns + "-" + name
	cr.Name, crb.Name, crb.RoleRef.Name, crb.Subjects = cluster, cluster, cluster, subject
	rbac := cs.RbacV1()
	if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), cluster, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), cluster, metav1.DeleteOptions{})
	})
	if _, err := rbac.ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return tokenKubeconfig(ctx, t, cs, cfg, ns, name)
}

// tokenKubeconfig is a kubeconfig that authenticates as the
// ServiceAccount name of ns with a short-lived token (TokenRequest, as
// kubectl create token), in a file of the test's.
func tokenKubeconfig(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, cfg *rest.Config, ns, name string) string {
	t.Helper()
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa", Namespace: ns}
	kc.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), fmt.Sprintf("%s.kubeconfig", name))
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A context that does not answer, and one that does not exist, are errors
// naming the context: never a report that looks healthy.
func TestDoctorDeadContext(t *testing.T) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["dead"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "x"}
	kc.Contexts["dead-ctx"] = &clientcmdapi.Context{Cluster: "dead", AuthInfo: "u"}
	kc.CurrentContext = "dead-ctx"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct{ context, want string }{
		{"dead-ctx", "context dead-ctx (https://127.0.0.1:1) does not answer"},
		{"", "context (current context) (https://127.0.0.1:1) does not answer"},
		{"no-such", `context no-such: context "no-such" does not exist`},
	} {
		r := Doctor(ctx, Config{Kubeconfig: path, Context: tc.context, UseAgentSandbox: "auto"}, nil)
		if r.OK || len(r.Checks) != 1 || r.Checks[0].Name != "context" || !strings.Contains(r.Checks[0].Detail, tc.want) || r.Checks[0].Fix == "" {
			t.Errorf("context %q: %+v, want a failed context check with %q", tc.context, r, tc.want)
		}
	}
}
