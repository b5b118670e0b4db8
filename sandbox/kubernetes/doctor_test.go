package kubernetes

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

// readmeRBAC is the namespace recipe of docs/kubernetes.md, parsed: the
// Namespace, its ServiceAccount, the Role and RoleBinding for the
// namespace, the ClusterRole and its binding for the RuntimeClass.
type readmeRBAC struct {
	namespace          corev1.Namespace
	serviceAccount     corev1.ServiceAccount
	role               rbacv1.Role
	binding            rbacv1.RoleBinding
	clusterRole        rbacv1.ClusterRole
	clusterRoleBinding rbacv1.ClusterRoleBinding
}

// readmeRBACMarker starts the namespace recipe of docs/kubernetes.md.
const readmeRBACMarker = "```yaml\n# mcp-sandbox: the namespace recipe"

// readmeNamespace is the recipe's namespace, which a team replaces.
const readmeNamespace = "team-a"

func readRBAC(t *testing.T) readmeRBAC { return readRBACFor(t, readmeNamespace) }

// readmeAdmin is the warm pools' admin block of docs/kubernetes.md,
// parsed: its ServiceAccount, Role and the two RoleBindings (the pools'
// Role, the runtime Role).
type readmeAdmin struct {
	serviceAccount        corev1.ServiceAccount
	role                  rbacv1.Role
	binding, runtimeBound rbacv1.RoleBinding
}

// readmeAdminMarker starts the admin block of docs/kubernetes.md.
const readmeAdminMarker = "```yaml\n# mcp-sandbox: the warm pools' admin"

// readAdminFor is the admin block with its namespace replaced by ns.
func readAdminFor(t *testing.T, ns string) readmeAdmin {
	t.Helper()
	docs := yamlBlock(t, readmeAdminMarker, ns)
	if len(docs) != 4 {
		t.Fatalf("the admin block of docs/kubernetes.md has %d documents, want ServiceAccount, Role, RoleBinding, RoleBinding", len(docs))
	}
	var r readmeAdmin
	for i, into := range []any{&r.serviceAccount, &r.role, &r.binding, &r.runtimeBound} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), into); err != nil {
			t.Fatalf("the admin block of docs/kubernetes.md, document %d: %v", i+1, err)
		}
	}
	return r
}

// yamlBlock is the block of docs/kubernetes.md that starts with marker,
// its namespace replaced by ns, split into its documents.
func yamlBlock(t *testing.T, marker, ns string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("docs/kubernetes.md has no block starting %q", marker)
	}
	body := doc[i+len("```yaml\n"):]
	body = strings.ReplaceAll(body[:strings.Index(body, "\n```")], readmeNamespace, ns)
	return strings.Split(body, "\n---\n")
}

// readRBACFor is the recipe with its namespace replaced by ns, as the
// docs tell a second team to (sed s/team-a/NS/g).
func readRBACFor(t *testing.T, ns string) readmeRBAC {
	t.Helper()
	docs := yamlBlock(t, readmeRBACMarker, ns)
	if len(docs) != 6 {
		t.Fatalf("the recipe of docs/kubernetes.md has %d documents, want Namespace, ServiceAccount, Role, RoleBinding, ClusterRole, ClusterRoleBinding", len(docs))
	}
	var r readmeRBAC
	for i, into := range []any{&r.namespace, &r.serviceAccount, &r.role, &r.binding, &r.clusterRole, &r.clusterRoleBinding} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), into); err != nil {
			t.Fatalf("the recipe of docs/kubernetes.md, document %d: %v", i+1, err)
		}
	}
	if r.namespace.Kind != "Namespace" || r.serviceAccount.Kind != "ServiceAccount" || r.role.Kind != "Role" || r.binding.Kind != "RoleBinding" || r.clusterRole.Kind != "ClusterRole" || r.clusterRoleBinding.Kind != "ClusterRoleBinding" {
		t.Fatalf("the recipe of docs/kubernetes.md holds %s, %s, %s, %s, %s, %s", r.namespace.Kind, r.serviceAccount.Kind, r.role.Kind, r.binding.Kind, r.clusterRole.Kind, r.clusterRoleBinding.Kind)
	}
	return r
}

// grants reports whether one of rules allows p.
func grants(rules []rbacv1.PolicyRule, p Permission) bool {
	res := p.Resource
	if p.Subresource != "" {
		res += "/" + p.Subresource
	}
	for _, r := range rules {
		if slices.Contains(r.APIGroups, p.Group) && slices.Contains(r.Resources, res) && slices.Contains(r.Verbs, p.Verb) {
			return true
		}
	}
	return false
}

// The Role of docs/kubernetes.md grants every permission Doctor checks (with every
// optional part in use), and nothing else: the two cannot drift apart.
func TestReadmeRoleIsWhatDoctorChecks(t *testing.T) {
	r := readRBAC(t)
	all := Permissions(Needs{AgentSandbox: true, Extensions: true, RuntimeClass: true, Metrics: true})
	for _, p := range all {
		rules := r.role.Rules
		if p.Cluster {
			rules = r.clusterRole.Rules
		}
		if !grants(rules, p) {
			t.Errorf("the RBAC block of docs/kubernetes.md does not grant %s (cluster-scoped: %v)", p, p.Cluster)
		}
	}
	for _, set := range []struct {
		rules   []rbacv1.PolicyRule
		cluster bool
	}{{r.role.Rules, false}, {r.clusterRole.Rules, true}} {
		for _, rule := range set.rules {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					resource, sub, _ := strings.Cut(res, "/")
					for _, v := range rule.Verbs {
						p := Permission{Group: g, Resource: resource, Subresource: sub, Verb: v, Cluster: set.cluster}
						if !slices.ContainsFunc(all, func(q Permission) bool { q.Optional = false; return q == p }) {
							t.Errorf("the RBAC block of docs/kubernetes.md grants %s, which the backend does not need", p)
						}
					}
				}
			}
		}
	}
	if r.namespace.Labels[LabelEnforce] != "restricted" {
		t.Errorf("the recipe's namespace is labelled %v, want %s=restricted", r.namespace.Labels, LabelEnforce)
	}
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: r.serviceAccount.Name, Namespace: r.namespace.Name}
	if !slices.Equal(r.binding.Subjects, []rbacv1.Subject{sa}) || !slices.Equal(r.clusterRoleBinding.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("the bindings bind %v and %v, want the recipe's ServiceAccount", r.binding.Subjects, r.clusterRoleBinding.Subjects)
	}
	if !strings.HasSuffix(r.clusterRole.Name, "-"+readmeNamespace) || !strings.HasSuffix(r.clusterRoleBinding.Name, "-"+readmeNamespace) {
		t.Errorf("cluster-wide objects %q and %q are not named after the namespace: a second team would overwrite them", r.clusterRole.Name, r.clusterRoleBinding.Name)
	}
	if r.binding.RoleRef.Name != r.role.Name || r.clusterRoleBinding.RoleRef.Name != r.clusterRole.Name {
		t.Errorf("the bindings name %q and %q, the roles are %q and %q", r.binding.RoleRef.Name, r.clusterRoleBinding.RoleRef.Name, r.role.Name, r.clusterRole.Name)
	}
}

// The admin block of docs/kubernetes.md grants exactly AdminPermissions
// (what the runtime Role lacks to make and change warm pools), and binds
// it and the runtime Role to its ServiceAccount.
func TestReadmeAdminRoleIsAdminPermissions(t *testing.T) {
	a, r := readAdminFor(t, readmeNamespace), readRBAC(t)
	admin := AdminPermissions()
	for _, p := range admin {
		if !grants(a.role.Rules, p) {
			t.Errorf("the admin Role of docs/kubernetes.md does not grant %s", p)
		}
	}
	for _, rule := range a.role.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					p := Permission{Group: g, Resource: res, Verb: v}
					if !slices.Contains(admin, p) {
						t.Errorf("the admin Role of docs/kubernetes.md grants %s, which AdminPermissions does not list", p)
					}
				}
			}
		}
	}
	for _, p := range admin {
		if p.Verb != "get" && p.Verb != "list" && grants(r.role.Rules, p) {
			t.Errorf("the runtime Role grants %s: a team's token could rewrite the pools' templates", p)
		}
	}
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: a.serviceAccount.Name, Namespace: readmeNamespace}
	if a.binding.RoleRef.Name != a.role.Name || a.runtimeBound.RoleRef.Name != r.role.Name ||
		!slices.Equal(a.binding.Subjects, []rbacv1.Subject{sa}) || !slices.Equal(a.runtimeBound.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("the admin bindings bind %v to %v and %v to %v; want both Roles bound to %v",
			a.binding.Subjects, a.binding.RoleRef.Name, a.runtimeBound.Subjects, a.runtimeBound.RoleRef.Name, sa)
	}
}

func TestPermissionString(t *testing.T) {
	for _, tc := range []struct {
		p    Permission
		want string
	}{
		{Permission{Resource: "pods", Subresource: "exec", Verb: "create"}, "create pods/exec"},
		{Permission{Group: "node.k8s.io", Resource: "runtimeclasses", Verb: "get", Cluster: true}, "get runtimeclasses.node.k8s.io"},
		{Permission{Group: AgentSandboxGroup, Resource: "sandboxes", Verb: "patch"}, "patch sandboxes.agents.x-k8s.io"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// Permissions asks for agent-sandbox's, the extensions', the metrics' and
// the RuntimeClass's permissions only when they are used.
func TestPermissionsByNeeds(t *testing.T) {
	has := func(ps []Permission, resource string) bool {
		return slices.ContainsFunc(ps, func(p Permission) bool { return p.Resource == resource })
	}
	plain := Permissions(Needs{})
	for _, r := range []string{"sandboxes", "sandboxclaims", "runtimeclasses"} {
		if has(plain, r) {
			t.Errorf("plain pods need %s", r)
		}
	}
	full := Permissions(Needs{AgentSandbox: true, Extensions: true, RuntimeClass: true})
	for _, r := range []string{"pods", "networkpolicies", "events", "sandboxes", "sandboxclaims", "sandboxtemplates", "sandboxwarmpools", "runtimeclasses"} {
		if !has(full, r) {
			t.Errorf("everything in use: %s missing", r)
		}
	}
	for _, want := range []string{"create pods/exec", "get pods/exec", "create pods/attach"} {
		if !slices.ContainsFunc(full, func(p Permission) bool { return p.String() == want }) {
			t.Errorf("%q missing", want)
		}
	}
	// PodMetrics are read only where the metrics API is served.
	isMetrics := func(p Permission) bool { return p.Group == MetricsGroup }
	if slices.ContainsFunc(full, isMetrics) {
		t.Error("the metrics API is in the permissions of a cluster that does not serve it")
	}
	if m := Permissions(Needs{Metrics: true}); !slices.ContainsFunc(m, func(p Permission) bool { return p.String() == "get pods.metrics.k8s.io" }) {
		t.Errorf("with the metrics API served, %v lacks get pods.metrics.k8s.io", m)
	}
}

// What use_agent_sandbox and warm_pool ask of the cluster, against what it
// serves: the agent-sandbox check, and whether the backend would use it.
func TestDoctorAgentSandboxModes(t *testing.T) {
	served := func(agent, ext bool) []*metav1.APIResourceList {
		lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}}}}
		if agent {
			lists = append(lists, &metav1.APIResourceList{GroupVersion: AgentSandboxGroup + "/v1beta1", APIResources: []metav1.APIResource{{Name: "sandboxes"}}})
		}
		if ext {
			lists = append(lists, &metav1.APIResourceList{GroupVersion: ExtensionsGroup + "/v1beta1", APIResources: []metav1.APIResource{{Name: "sandboxclaims"}}})
		}
		return lists
	}
	for _, tc := range []struct {
		name       string
		agent, ext bool
		mode       string
		warm       int
		ok, uses   bool
		want       string // part of a failed check's detail, or of the agent-sandbox check's
	}{
		{"auto, installed", true, true, "auto", 1, true, true, "installed: agents.x-k8s.io/v1beta1, extensions extensions.agents.x-k8s.io/v1beta1"},
		{"auto, absent", false, false, "auto", 0, true, false, "not installed: plain pods"},
		{"auto, absent, warm pool", false, false, "auto", 2, false, false, "kubernetes.warm_pool is set, but agent-sandbox is not used"},
		{"always, absent", false, false, "always", 0, false, false, `not installed, and use_agent_sandbox = "always"`},
		{"never, installed", true, true, "never", 0, true, false, "not used (use_agent_sandbox = \"never\"): plain pods; the cluster serves agents.x-k8s.io/v1beta1"},
		{"never, warm pool", true, true, "never", 1, false, false, "kubernetes.warm_pool is set, but agent-sandbox is not used"},
		{"no extensions, warm pool", true, false, "auto", 1, false, true, "warm_pool is set, but agent-sandbox's extensions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: served(tc.agent, tc.ext)}}
			r := &Report{OK: true}
			needs := r.checkAgentSandbox(d, Config{UseAgentSandbox: tc.mode, WarmPool: map[string]int{"python": tc.warm}})
			var details []string
			for _, c := range r.Checks {
				details = append(details, c.Detail)
				if !c.OK && c.Fix == "" {
					t.Errorf("check %s failed with no fix", c.Name)
				}
			}
			if r.OK != tc.ok || r.UsesAgentSandbox != tc.uses || needs.AgentSandbox != tc.uses || !strings.Contains(strings.Join(details, " | "), tc.want) {
				t.Errorf("ok %v uses %v needs %+v, checks %q; want ok %v uses %v and %q", r.OK, r.UsesAgentSandbox, needs, details, tc.ok, tc.uses, tc.want)
			}
		})
	}
}

// The metrics check says whether the metrics API is served, and so whose
// reading usage is; either way it passes.
func TestDoctorMetrics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		served []string // the metrics API's group versions
		want   bool
		detail string
	}{
		{"served", []string{"metrics.k8s.io/v1beta1"}, true, "served: metrics.k8s.io/v1beta1: memory and CPU come from it"},
		{"not served", nil, false, "not served: usage is read inside each pod"},
		{"an unknown version", []string{"metrics.k8s.io/v2"}, false, "not served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}}}}
			for _, gv := range tc.served {
				lists = append(lists, &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "pods"}}})
			}
			r := &Report{OK: true}
			got := r.checkMetrics(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}})
			if got != tc.want || r.Metrics != tc.want || !r.OK || len(r.Checks) != 1 || r.Checks[0].Name != "metrics" || !strings.Contains(r.Checks[0].Detail, tc.detail) {
				t.Errorf("checkMetrics = %v, report %+v; want %v and %q", got, r, tc.want, tc.detail)
			}
		})
	}
}
