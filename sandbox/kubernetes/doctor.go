package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Permission is one verb on one resource (and subresource) that the
// backend needs in its namespace, or, for a cluster-scoped resource, in
// the cluster.
type Permission struct {
	Group, Resource, Subresource, Verb string
	// Cluster is set for a cluster-scoped resource (a ClusterRole grants it).
	Cluster bool
	// Optional is set for a permission the backend works without, in a
	// lesser way (reading PodMetrics: usage is then read inside the pod).
	Optional bool
}

// String is the permission as kubectl auth can-i writes it:
// "create pods/exec", "get runtimeclasses.node.k8s.io".
func (p Permission) String() string {
	r := p.Resource
	if p.Group != "" {
		r += "." + p.Group
	}
	if p.Subresource != "" {
		r += "/" + p.Subresource
	}
	return p.Verb + " " + r
}

// Needs say which optional parts of the cluster the backend uses, and so
// which permissions it needs beyond the pods'.
type Needs struct {
	// AgentSandbox: Sandbox objects (agents.x-k8s.io).
	AgentSandbox bool
	// Extensions: SandboxTemplate, SandboxWarmPool, SandboxClaim.
	Extensions bool
	// RuntimeClass: the configured RuntimeClass is read.
	RuntimeClass bool
	// Metrics: Usage reads PodMetrics (metrics.k8s.io), served.
	Metrics bool
}

// Permissions lists what the backend needs for needs; docs/kubernetes.md's Role
// grants all of them (a test checks it does).
func Permissions(needs Needs) []Permission {
	var out []Permission
	add := func(group, resource, sub string, cluster bool, verbs ...string) {
		for _, v := range verbs {
			out = append(out, Permission{Group: group, Resource: resource, Subresource: sub, Verb: v, Cluster: cluster})
		}
	}
	// patch: Rename (a warm-pool sandbox claimed) changes the name annotation.
	add("", "pods", "", false, "create", "get", "list", "watch", "delete", "patch")
	// WebSocket exec and attach open with GET; SPDY with POST (create).
	add("", "pods", "exec", false, "create", "get")
	add("", "pods", "attach", false, "create", "get")
	add("", "events", "", false, "list")
	add("networking.k8s.io", "networkpolicies", "", false, "create", "delete", "get", "list", "patch")
	if needs.AgentSandbox {
		add(AgentSandboxGroup, "sandboxes", "", false, "create", "get", "list", "watch", "delete", "patch")
	}
	if needs.Extensions {
		add(ExtensionsGroup, "sandboxclaims", "", false, "create", "get", "list", "watch", "delete", "patch")
		// Claims only: an admin makes and changes the pools
		// (AdminPermissions); get and list read them.
		for _, r := range []string{"sandboxtemplates", "sandboxwarmpools"} {
			add(ExtensionsGroup, r, "", false, "get", "list")
		}
	}
	if needs.RuntimeClass {
		add("node.k8s.io", "runtimeclasses", "", true, "get")
	}
	if needs.Metrics {
		add(MetricsGroup, "pods", "", false, "get")
		out[len(out)-1].Optional = true
	}
	return out
}

// AdminPermissions are what making, sizing and removing warm pools needs
// beyond Permissions: docs/kubernetes.md's admin Role grants them (a test
// checks it does), the runtime Role does not. Without them the backend
// claims from the pools an admin made (warmadmin.go).
func AdminPermissions() []Permission {
	var out []Permission
	for _, r := range []string{"sandboxtemplates", "sandboxwarmpools"} {
		for _, v := range []string{"create", "get", "list", "delete", "patch"} {
			out = append(out, Permission{Group: ExtensionsGroup, Resource: r, Verb: v})
		}
	}
	return out
}

// Check is one check of a cluster: what was found and, when it is not
// OK, what to do.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is what Doctor found (part of `mcp-sandbox doctor --json`).
type Report struct {
	OK        bool   `json:"ok"`
	Context   string `json:"context"`
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Server    string `json:"server"`
	Version   string `json:"version"`
	// AgentSandbox and Extensions are the group/versions served ("" when
	// not installed); UsesAgentSandbox whether the backend would use it.
	AgentSandbox     string `json:"agent_sandbox"`
	Extensions       string `json:"extensions"`
	UsesAgentSandbox bool   `json:"uses_agent_sandbox"`
	// Metrics: the cluster serves the metrics API in a version Usage
	// reads, so memory and CPU are the cluster's reading.
	Metrics      bool   `json:"metrics"`
	RuntimeClass string `json:"runtime_class"`
	// Missing are the permissions the backend needs and lacks;
	// MissingOptional those it lacks and works without (see
	// Permission.Optional), which doctor names without failing.
	Missing         []string `json:"missing"`
	MissingOptional []string `json:"missing_optional,omitempty"`
	Checks          []Check  `json:"checks"`
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	r.OK = r.OK && c.OK
}

// Doctor checks the cluster cfg names for the backend: that the context
// answers (and the server's version), agent-sandbox (installed, which
// version, and whether cfg lets the backend use it), the metrics API
// (served, and so whose reading usage is), the RuntimeClass, RBAC (every
// permission the backend needs, asked with SelfSubjectAccessReview as
// the kubeconfig's user), that the namespace enforces Pod Security
// "restricted", and each of images: its program run in a short-lived pod
// of it.
func Doctor(ctx context.Context, cfg Config, log *slog.Logger, images ...ImageProbe) *Report {
	r := &Report{OK: true, Namespace: cfg.Namespace, RuntimeClass: cfg.RuntimeClass, Missing: []string{}}
	r.Context, r.Cluster, r.Server = kubeconfigNames(cfg)
	b, err := New(ctx, cfg, log)
	if err != nil {
		r.add(Check{Name: "context", Detail: err.Error(),
			Fix: "check kubernetes.context and kubernetes.kubeconfig (kubectl --context NAME version), or set backend.kind = \"docker\""})
		return r
	}
	r.Cluster, r.Namespace, r.Server = b.Cluster(), b.Namespace(), b.rest.Host
	if v, err := (restDiscovery{b.cs.coreREST}).ServerVersion(); err == nil {
		r.Version = v.GitVersion
	}
	r.add(Check{Name: "context", OK: true, Detail: fmt.Sprintf("%s answers: Kubernetes %s", r.Server, r.Version)})
	needs := r.checkAgentSandbox(b.cs.disc, b.cfg)
	needs.Metrics = r.checkMetrics(b.cs.disc)
	needs.RuntimeClass = cfg.RuntimeClass != ""
	r.checkRuntimeClass(ctx, b)
	r.checkRBAC(ctx, b, Permissions(needs))
	if len(r.MissingOptional) > 0 {
		// The only optional permission is reading PodMetrics.
		for i, c := range r.Checks {
			if c.Name == "metrics" {
				r.Checks[i].Detail = "served (" + MetricsGroup + "), but this user may not read it: usage is read inside each pod, the sandbox's word"
				r.Checks[i].Fix = "grant get on pods.metrics.k8s.io (the Role of docs/kubernetes.md does)"
			}
		}
	}
	if needs.Extensions {
		r.checkPoolAdmin(ctx, b)
	}
	r.checkPodSecurity(ctx, b)
	r.checkImages(ctx, b, images)
	return r
}

// kubeconfigNames are the kubeconfig context cfg uses (its Context, else
// the kubeconfig's current one, else "(current context)"), that context's
// cluster and the cluster's server, as the kubeconfig names them (""
// where it does not), so that doctor names what it tried even when the
// cluster does not answer.
func kubeconfigNames(cfg Config) (name, cluster, server string) {
	name = cfg.Context
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		return cmp.Or(name, "(current context)"), "", ""
	}
	name = cmp.Or(name, raw.CurrentContext, "(current context)")
	if kc, ok := raw.Contexts[name]; ok {
		cluster = kc.Cluster
		if c, ok := raw.Clusters[cluster]; ok {
			server = c.Server
		}
	}
	return name, cluster, server
}

// checkAgentSandbox finds what agent-sandbox serves and what the backend
// would use by kubernetes.use_agent_sandbox and warm_pool.
func (r *Report) checkAgentSandbox(d discoverer, cfg Config) Needs {
	gvr, sbErr := DiscoverAgentSandbox(d)
	if sbErr == nil {
		r.AgentSandbox = gvr.GroupVersion().String()
	}
	ext, extErr := DiscoverExtensions(d)
	if extErr == nil {
		r.Extensions = ext.Claims.GroupVersion().String()
	}
	warm := false
	for _, n := range cfg.WarmPool {
		warm = warm || n > 0
	}
	mode := cfg.UseAgentSandbox
	c := Check{Name: "agent-sandbox", OK: true}
	switch {
	case sbErr != nil && !errors.Is(sbErr, ErrNoAgentSandbox):
		c.OK, c.Detail = false, sbErr.Error()
		c.Fix = "install an agent-sandbox release this version knows (v0.5.0 serves v1beta1), or set kubernetes.use_agent_sandbox = \"never\""
	case mode == "never":
		c.Detail = "not used (use_agent_sandbox = \"never\"): plain pods"
		if r.AgentSandbox != "" {
			c.Detail += "; the cluster serves " + r.AgentSandbox
		}
	case sbErr != nil && mode == "always":
		c.OK, c.Detail = false, "not installed, and use_agent_sandbox = \"always\""
		c.Fix = "install agent-sandbox (https://github.com/kubernetes-sigs/agent-sandbox), or set kubernetes.use_agent_sandbox = \"auto\""
	case sbErr != nil:
		c.Detail = "not installed: plain pods, removed by this program's expiry sweep"
	default:
		r.UsesAgentSandbox = true
		c.Detail = "installed: " + r.AgentSandbox
		if r.Extensions != "" {
			c.Detail += ", extensions " + r.Extensions
		}
	}
	r.add(c)
	if warm && (!r.UsesAgentSandbox || extErr != nil) {
		why := "agent-sandbox is not used"
		if r.UsesAgentSandbox {
			why = extErr.Error()
		}
		r.add(Check{Name: "warm pool", Detail: "kubernetes.warm_pool is set, but " + why,
			Fix: "install agent-sandbox with its extensions, or set kubernetes.warm_pool = {}"})
	}
	return Needs{AgentSandbox: r.UsesAgentSandbox, Extensions: r.UsesAgentSandbox && extErr == nil}
}

// checkMetrics says whether the cluster serves the metrics API, and so
// whose reading Usage's memory and CPU are. Either is OK: without it they
// are read inside each pod.
func (r *Report) checkMetrics(d discoverer) bool {
	v, err := DiscoverMetrics(d)
	c := Check{Name: "metrics", OK: true}
	switch {
	case err != nil:
		c.Detail = "cannot tell whether the metrics API is served (" + err.Error() + "): usage is read inside each pod, the sandbox's word"
	case v == "":
		c.Detail = "the metrics API (" + MetricsGroup + ") is not served: usage is read inside each pod, the sandbox's word (install metrics-server for the cluster's reading)"
	default:
		r.Metrics = true
		c.Detail = "served: " + MetricsGroup + "/" + v + ": memory and CPU come from it (inside the pod until its first sample, and pids always)"
	}
	r.add(c)
	return r.Metrics
}

// checkRuntimeClass checks that the configured RuntimeClass exists.
func (r *Report) checkRuntimeClass(ctx context.Context, b *Backend) {
	name := b.cfg.RuntimeClass
	if name == "" {
		r.add(Check{Name: "runtime class", OK: true, Detail: "none set: pods run with the cluster's default runtime"})
		return
	}
	rc, err := b.cs.runtimeClasses.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		r.add(Check{Name: "runtime class", OK: true, Detail: fmt.Sprintf("%s (handler %s)", name, rc.Handler)})
	case apierrors.IsNotFound(err):
		r.add(Check{Name: "runtime class", Detail: fmt.Sprintf("RuntimeClass %q does not exist", name),
			Fix: "create it (e.g. gVisor's: handler runsc) or change kubernetes.runtime_class"})
	default:
		r.add(Check{Name: "runtime class", Detail: fmt.Sprintf("RuntimeClass %q: %v", name, err),
			Fix: "grant get runtimeclasses.node.k8s.io (the ClusterRole of docs/kubernetes.md)"})
	}
}

// checkRBAC asks, for each permission, whether the kubeconfig's user has
// it in the backend's namespace (all questions at once).
func (r *Report) checkRBAC(ctx context.Context, b *Backend, perms []Permission) {
	allowed := make([]bool, len(perms))
	errs := make([]error, len(perms))
	// The questions go at once: client-go's default rate (5 a second)
	// would make doctor wait seconds for them.
	rc := rest.CopyConfig(b.rest)
	rc.QPS, rc.Burst = float32(len(perms)), len(perms)
	cs, err := newClients(rc)
	if err != nil {
		r.add(Check{Name: "rbac", Detail: err.Error()})
		return
	}
	var wg sync.WaitGroup
	for i, p := range perms {
		wg.Go(func() { allowed[i], errs[i] = allowed1(ctx, cs, b.namespace, p) })
	}
	wg.Wait()
	for i, p := range perms {
		if errs[i] != nil {
			r.add(Check{Name: "rbac", Detail: fmt.Sprintf("cannot ask whether %s is allowed: %v", p, errs[i]),
				Fix: "the kubeconfig's user must be able to create selfsubjectaccessreviews (every authenticated user can by default)"})
			return
		}
		switch {
		case allowed[i]:
		case p.Optional:
			r.MissingOptional = append(r.MissingOptional, p.String())
		default:
			r.Missing = append(r.Missing, p.String())
		}
	}
	fix := "bind the Role of docs/kubernetes.md to this user in namespace " + r.Namespace
	switch {
	case len(r.Missing) > 0:
		r.add(Check{Name: "rbac", Detail: fmt.Sprintf("not allowed in namespace %s: %v", r.Namespace, append(r.Missing, r.MissingOptional...)), Fix: fix})
	case len(r.MissingOptional) > 0:
		r.add(Check{Name: "rbac", OK: true, Fix: fix, Detail: fmt.Sprintf(
			"the %d permissions the backend needs are granted in namespace %s, but not %v: usage is read inside each pod, the sandbox's word, though the metrics API is served",
			len(perms)-len(r.MissingOptional), r.Namespace, r.MissingOptional)})
	default:
		r.add(Check{Name: "rbac", OK: true, Detail: fmt.Sprintf("the %d permissions the backend needs are granted in namespace %s", len(perms), r.Namespace)})
	}
}

// allowed1 asks the API server whether the kubeconfig's user has p in
// namespace ns.
func allowed1(ctx context.Context, cs *clients, ns string, p Permission) (bool, error) {
	if p.Cluster {
		ns = ""
	}
	ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource,
		},
	}}
	res, err := cs.reviews.Create(ctx, ssar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}
