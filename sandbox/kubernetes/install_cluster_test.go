package kubernetes_test

// install_packages through the engine on the Kubernetes backend, on the
// real test cluster: the helper pod and its policy, what it installs, what
// it must not see, and that nothing of it is left.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// podBridgeHost is the host's address on the pods' network (their default
// route's gateway): the host address whose subnet holds the IP of a probe
// pod started in ns under the default RuntimeClass.
func podBridgeHost(ctx context.Context, t *testing.T, cs *k8s.Clientset, ns string) string {
	t.Helper()
	probe, err := kubernetes.Pod(backend.ContainerSpec{
		Name: "mcp-sandbox-probe", Image: "mcp-sandbox-test/busybox:1",
		Labels:      map[string]string{backend.LabelID: "probe"},
		MemoryBytes: 32 << 20, NanoCPUs: 1e8, WorkspaceMB: 1,
	}, kubernetes.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	probe.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer cs.CoreV1().Pods(ns).Delete(context.WithoutCancel(ctx), probe.Name, metav1.DeleteOptions{})
	var ip net.IP
	for deadline := time.Now().Add(90 * time.Second); ip == nil; time.Sleep(200 * time.Millisecond) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, probe.Name, metav1.GetOptions{})
		if err == nil {
			ip = net.ParseIP(p.Status.PodIP)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe pod has no IP after 90 s (%v)", err)
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.Contains(ip) && !n.IP.Equal(ip) {
			return n.IP.String()
		}
	}
	testenv.Missing(t, "a host address on the pods' network (pod IP "+ip.String()+")")
	return ""
}

// helperPolicies lists the helper policies of ns.
func helperPolicies(ctx context.Context, cs *k8s.Clientset, ns string) ([]networkingv1.NetworkPolicy, error) {
	l, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelHelperPod})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// noHelpersLeft fails the test when a helper pod or policy is left in ns.
func noHelpersLeft(ctx context.Context, t *testing.T, cs *k8s.Clientset, ns string) {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: backend.LabelHelper})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("helper pods left after the install: %d (%v)", len(pods.Items), err)
	}
	nps, err := helperPolicies(ctx, cs, ns)
	if err != nil || len(nps) != 0 {
		t.Errorf("helper policies left after the install: %d (%v)", len(nps), err)
	}
}

// mustInstall runs install_packages for pkgs in sandbox id.
func mustInstall(ctx context.Context, t *testing.T, eng *sandbox.Engine, id string, pkgs ...string) install.Result {
	t.Helper()
	res, err := eng.InstallPackages(ctx, id, install.Request{Packages: pkgs}, nil)
	if err != nil {
		t.Fatalf("install %v: %+v %v", pkgs, res, err)
	}
	return res
}

// execOut runs a shell line in the sandbox through the engine.
func execOut(ctx context.Context, t *testing.T, eng *sandbox.Engine, id, cmd string) string {
	t.Helper()
	r, err := eng.Exec(ctx, id, sandbox.ExecRequest{Command: cmd})
	if err != nil {
		t.Fatalf("exec %q: %v", cmd, err)
	}
	return r.Stdout + r.Stderr
}

// install_packages on the cluster under the default RuntimeClass (runc):
// pip (and, as the admin, npm: npmOnCluster) installs from a local index
// served on the pods' bridge through a
// helper pod whose own policy allows it egress (seen while it fetches:
// the policy selects the helper alone, never the sandbox), the package
// imports in the sandbox, files the sandbox planted to run or steer an
// installer are not seen by it, an unknown package is a result with the
// hint, and no helper pod or policy is left; the sandbox's own policy
// still denies everything. As the cluster's admin and with only the
// README's Role.
func TestInstallOnCluster(t *testing.T) {
	for _, role := range []string{"admin", "README Role"} {
		t.Run(role, func(t *testing.T) { installOnCluster(t, role != "admin") })
	}
}

func installOnCluster(t *testing.T, readmeRole bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	kc := kubernetes.Config{UseAgentSandbox: "auto"}
	if readmeRole {
		kc.Kubeconfig, kc.Namespace = kubernetes.ReadmeRole(t)
	}
	be := kubernetes.NewTestBackend(t, kc)
	cs, ns := clientset(t), be.Namespace()
	host := podBridgeHost(ctx, t, cs, ns)
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		testenv.Missing(t, "a listener on the pods' bridge address "+host+": "+err.Error())
	}
	var mu sync.Mutex
	var seen []networkingv1.NetworkPolicy // the helper policies while the index served
	pipURL, npmURL, _ := testenv.PackageIndex(t, l, func(*http.Request) {
		nps, err := helperPolicies(ctx, cs, ns)
		if err != nil {
			t.Errorf("list helper policies: %v", err)
		}
		mu.Lock()
		seen = append(seen, nps...)
		mu.Unlock()
	})
	eng, _ := clusterEngineOn(t, be, func(c *config.Config) {
		c.Network.InstallEnv = map[string]string{"PIP_INDEX_URL": pipURL, "PIP_TRUSTED_HOST": host, "npm_config_registry": npmURL}
		c.Images.JavaScript = "mcp-sandbox-test/node:18"
	})
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	plantForInstaller(ctx, t, eng, sb.ID)

	start := time.Now()
	res := mustInstall(ctx, t, eng, sb.ID, "mcpsbxdemo==1.0")
	t.Logf("pip install through a helper pod: %s", time.Since(start).Round(time.Millisecond))
	if res.ExitCode != 0 || res.Manager != "pip" || len(res.Installed) != 1 {
		t.Fatalf("pip install: %+v", res)
	}
	sbPod, err := cs.CoreV1().Pods(ns).Get(ctx, sb.ContainerID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	checkSeenPolicies(t, seen, sbPod)
	mu.Unlock()
	// No python has started in the sandbox since the files were planted, so
	// a mark can only come from the installer. The sandbox's files stay.
	if out := execOut(ctx, t, eng, sb.ID, "ls -a /workspace /tmp | grep pwned; test -f /workspace/pip/__init__.py || echo lost; test -e /cache && echo the sandbox sees the helpers cache"); out != "" {
		t.Errorf("the installer ran or read the sandbox's files: %q", out)
	}
	run, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "import mcpsbxdemo\nprint(mcpsbxdemo.VALUE)"})
	if err != nil || run.Stdout != "42\n" {
		t.Fatalf("import after install: %+v %v", run, err)
	}
	noHelpersLeft(ctx, t, cs, ns)

	res = mustInstall(ctx, t, eng, sb.ID, "no-such-package-xyz")
	if res.ExitCode == 0 || !strings.Contains(res.Note, "has no such package") {
		t.Errorf("unknown package: %+v", res)
	}
	if !readmeRole {
		npmOnCluster(ctx, t, eng)
	}
	noHelpersLeft(ctx, t, cs, ns)
	np, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, sb.ContainerID, metav1.GetOptions{})
	if err != nil || len(np.Spec.Egress) != 0 || len(np.Spec.Ingress) != 0 || len(np.Spec.PolicyTypes) != 2 {
		t.Errorf("the sandbox's own policy after installs: %+v, %v; want deny-all", np, err)
	}
}

// npmOnCluster: npm installs through a helper pod into a javascript
// sandbox, whose planted package.json (install scripts), .npmrc and shell
// script it never runs or reads, and the package then loads with require.
func npmOnCluster(ctx context.Context, t *testing.T, eng *sandbox.Engine) {
	t.Helper()
	js, err := eng.Create(ctx, sandbox.CreateRequest{Language: "javascript"})
	if err != nil {
		t.Fatalf("Create javascript: %v", err)
	}
	pkg := `{"name": "w", "version": "1.0.0", "scripts": {"preinstall": "touch /workspace/pwned-preinstall /tmp/pwned-preinstall", "postinstall": "touch /workspace/pwned-postinstall"}}`
	npmrc := "logs-dir=/workspace/pwned-npmrc\nscript-shell=/workspace/evil.sh\n"
	evil := "#!/bin/sh\ntouch /workspace/pwned-shell\n"
	plant := "printf %s " + quote(pkg) + " > package.json && printf %s " + quote(npmrc) + " > .npmrc && printf %s " + quote(evil) + " > evil.sh && chmod +x evil.sh && echo planted"
	if out := execOut(ctx, t, eng, js.ID, plant); out != "planted\n" {
		t.Fatalf("plant: %q", out)
	}
	res := mustInstall(ctx, t, eng, js.ID, "mcpsbx-demo@1.0.0")
	if res.ExitCode != 0 || res.Manager != "npm" {
		t.Fatalf("npm install: %+v", res)
	}
	if out := execOut(ctx, t, eng, js.ID, "ls -a /workspace /tmp | grep pwned; test -f /workspace/evil.sh || echo lost"); out != "" {
		t.Errorf("the installer ran or read the sandbox's files: %q", out)
	}
	run, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: js.ID, Code: "console.log(require('mcpsbx-demo').value)"})
	if err != nil || run.Stdout != "43\n" {
		t.Errorf("require after install: %+v %v", run, err)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// plantForInstaller writes, with the sandbox's own code, the files an
// installer with the network must never run or read: a .pth file and
// usercustomize in the user site, a pip module in the working directory,
// pip config files. Each, if run or read, leaves a file named pwned-*.
func plantForInstaller(ctx context.Context, t *testing.T, eng *sandbox.Engine, id string) {
	t.Helper()
	plant := testenv.PipTraps()
	if r, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: id, Code: plant}); err != nil || r.ExitCode != 0 {
		t.Fatalf("plant: %+v %v", r, err)
	}
}

// checkSeenPolicies: while the index served the helper, one helper policy
// existed; it allowed egress everywhere, denied ingress, and selected
// neither the sandbox's pod nor anything but the helper.
func checkSeenPolicies(t *testing.T, seen []networkingv1.NetworkPolicy, sbPod *corev1.Pod) {
	t.Helper()
	if len(seen) == 0 {
		t.Error("no helper policy existed while the helper fetched from the index")
		return
	}
	for _, np := range seen {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		if np.Name != seen[0].Name || sel.Matches(labels.Set(sbPod.Labels)) || np.Spec.PodSelector.MatchLabels[kubernetes.LabelHelperPod] != np.Name {
			t.Errorf("helper policy %s selects %+v (the sandbox too: %v)", np.Name, np.Spec.PodSelector, sel.Matches(labels.Set(sbPod.Labels)))
		}
		// The helper's only way out is its proxy, through its agent.
		if len(np.Spec.Egress) != 0 || len(np.Spec.Ingress) != 0 || len(np.Spec.PolicyTypes) != 2 {
			t.Errorf("helper policy %s while it ran: %+v; want deny-all", np.Name, np.Spec)
		}
		if len(np.OwnerReferences) != 1 || np.OwnerReferences[0].Kind != "Pod" || np.OwnerReferences[0].Name != np.Name {
			t.Errorf("helper policy %s owned by %+v, want its helper pod", np.Name, np.OwnerReferences)
		}
	}
}

// Under the gvisor RuntimeClass the helper runs under gVisor too; on the
// CI cluster its pods have no network (runsc --network=none), so the
// install fails: a normal result (never an error, never a hang) that
// leaves no helper pod or policy, and the sandbox still has only lo.
func TestInstallGVisorOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	be := kubernetes.NewTestBackend(t, kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor"})
	cs, ns := clientset(t), be.Namespace()
	eng, _ := clusterEngineOn(t, be, func(c *config.Config) {
		// TEST-NET-1: nothing answers there, wherever the helper is.
		c.Network.InstallEnv = map[string]string{"PIP_INDEX_URL": "http://192.0.2.1:9/simple", "PIP_TIMEOUT": "3", "PIP_RETRIES": "0"}
	})
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	res := mustInstall(ctx, t, eng, sb.ID, "mcpsbxdemo")
	if res.ExitCode == 0 || res.TimedOut || len(res.Installed) != 0 {
		t.Errorf("install without a network: %+v", res)
	}
	noHelpersLeft(ctx, t, cs, ns)
	if out := execOut(ctx, t, eng, sb.ID, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`); out != "lo\n" {
		t.Errorf("the gVisor sandbox has interfaces besides lo: %q", out)
	}
}

// helperSandbox is a plain busybox sandbox pod (sandbox id hcancel) on a
// backend of its own, removed when the test ends.
func helperSandbox(ctx context.Context, t *testing.T) (*kubernetes.Backend, *k8s.Clientset, string, *corev1.Pod) {
	t.Helper()
	be := kubernetes.NewTestBackend(t, kubernetes.Config{UseAgentSandbox: "never"})
	cs, ns := clientset(t), be.Namespace()
	id, err := be.Create(ctx, backend.ContainerSpec{
		Name: backend.NamePrefix + "hcancel", Image: "mcp-sandbox-test/busybox:1",
		Labels:  map[string]string{backend.LabelManaged: "true", backend.LabelID: "hcancel"},
		Network: "none", MemoryBytes: 64 << 20, NanoCPUs: 5e8, WorkspaceMB: 8,
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { be.Remove(context.Background(), id) })
	sbPod, err := cs.CoreV1().Pods(ns).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return be, cs, ns, sbPod
}

// onFirstWrite calls onFire when the first byte is written to it.
type onFirstWrite struct {
	once   sync.Once
	onFire func()
}

func (c *onFirstWrite) Write(p []byte) (int, error) {
	c.once.Do(c.onFire)
	return len(p), nil
}

// A helper whose ctx ends while its command runs: RunHelper returns the
// ctx's error with the command killed, and removes the helper pod and its
// policy (with a context of its own). While it ran, the helper pod
// belonged to the sandbox's pod (by UID, so the cluster's garbage
// collector would remove it with the sandbox), had a deadline, and was
// listed as a helper of its owner.
func TestHelperCancelOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be, cs, ns, sbPod := helperSandbox(ctx, t)
	id := sbPod.Name
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	var helpers []corev1.Pod
	var listed []backend.ContainerInfo
	out := &onFirstWrite{onFire: func() {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: backend.LabelHelper + "=hcancel"})
		if err == nil {
			helpers = l.Items
		}
		listed, _ = be.List(ctx)
		hcancel()
	}}
	st, err := be.RunHelper(hctx, id, backend.HelperSpec{
		Image: "mcp-sandbox-test/busybox:1", User: "65533:65533", Network: "egress",
		MemoryBytes: 64 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 8, CacheDir: "/cache",
		Labels: map[string]string{
			backend.LabelManaged: "true", backend.LabelHelper: "hcancel", backend.LabelID: "hcancel-install", backend.LabelOwner: "hcancel-owner",
		},
		Cmd: []string{"/bin/sh", "-c", "echo started; sleep 600"}, Stdout: out,
		Collect: "out", Into: func(io.Reader) error { t.Error("Into called after a cancelled helper"); return nil },
	})
	if !errors.Is(err, context.Canceled) || !st.Killed {
		t.Errorf("cancelled helper = %+v, %v; want killed and context.Canceled", st, err)
	}
	if len(helpers) != 1 {
		t.Fatalf("%d helper pods while it ran, want 1", len(helpers))
	}
	h := helpers[0]
	if o := h.OwnerReferences; len(o) != 1 || o[0].UID != sbPod.UID || o[0].Name != id {
		t.Errorf("helper pod owned by %+v, want the sandbox pod %s (%s)", o, id, sbPod.UID)
	}
	if d := h.Spec.ActiveDeadlineSeconds; d == nil || *d <= 0 {
		t.Errorf("helper pod deadline %v", d)
	}
	// List shows the helper as Docker's does: marked as a helper (so the
	// engine never takes it for a sandbox) with its owner (so an owner's
	// sweep removes it).
	n := 0
	for _, c := range listed {
		if c.ID == h.Name {
			n++
			if c.Labels[backend.LabelHelper] != "hcancel" || c.Labels[backend.LabelOwner] != "hcancel-owner" {
				t.Errorf("List has the helper with labels %v", c.Labels)
			}
		}
	}
	if n != 1 {
		t.Errorf("List had the helper %d times while it ran, want once", n)
	}
	noHelpersLeft(ctx, t, cs, ns)
}

// The helper goes with its sandbox even without a server to remove it:
// when the sandbox's pod is deleted behind RunHelper's back (as the
// cluster does at a Sandbox's shutdownTime), the cluster's garbage
// collector deletes the helper pod it owns, so a helper's command that
// would run for ten minutes ends (RunHelper returns) and nothing is left.
func TestHelperGoesWithSandboxOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be, cs, ns, sbPod := helperSandbox(ctx, t)
	out := &onFirstWrite{onFire: func() {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, sbPod.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete the sandbox pod: %v", err)
		}
	}}
	st, err := be.RunHelper(ctx, sbPod.Name, backend.HelperSpec{
		Image: "mcp-sandbox-test/busybox:1", User: "65533:65533", Network: "none",
		MemoryBytes: 64 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 8,
		Labels: map[string]string{backend.LabelManaged: "true", backend.LabelHelper: "hcancel", backend.LabelID: "hcancel-install"},
		Cmd:    []string{"/bin/sh", "-c", "echo started; sleep 600"}, Stdout: out,
	})
	if ctx.Err() != nil || (err == nil && st.ExitCode == 0) {
		t.Errorf("RunHelper after its sandbox pod went = %+v, %v (ctx %v); want it ended by the helper's removal", st, err, ctx.Err())
	}
	noHelpersLeft(ctx, t, cs, ns)
}
