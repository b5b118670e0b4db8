package trayapp

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/kubeconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// With backend.kind = "kubernetes" (on the cluster
// MCP_SANDBOX_TEST_KUBECONFIG names, in a namespace of the test's own;
// DOCKER_HOST a dead socket), the tray's menu and the window's headline
// name the cluster and namespace; a sandbox a server makes on the
// cluster is counted, and "Stop all sandboxes" removes its pod. The tray
// reaches the cluster through a proxy the test cuts: the menu, a
// notification and the window's headline say the cluster is not
// reachable, in Kubernetes' words, and that it is back once restored.
func TestTrayOnCluster(t *testing.T) {
	skipUnderRace(t)
	kubeconfig := os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("MCP_SANDBOX_TEST_KUBECONFIG is not set (.ci/k8s-up prints a kubeconfig)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, ns := clusterNamespace(ctx, t, kubeconfig)
	px, proxied := proxiedKubeconfig(t, kubeconfig)
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	table := "\n[backend]\nkind = \"kubernetes\"\n\n[kubernetes]\nkubeconfig = \"" + proxied + "\"\nnamespace = \"" + ns +
		"\"\nuse_agent_sandbox = \"never\"\nruntime_class = \"gvisor\"\n"
	if err := os.WriteFile(cfgPath, []byte(apptest.ConfigTOML()+table), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := "unix://" + filepath.Join(t.TempDir(), "dead.sock")
	d := startDesktop(t)
	p, m := d.startTray(t, []string{"MCP_SANDBOX_CONFIG=" + cfgPath, "DOCKER_HOST=" + dead}, "--hidden")
	line := func(want string) {
		t.Helper()
		if _, err := m.waitMenu(60*time.Second, func(items []menuItem) bool {
			l := statusLine(items)
			return strings.HasPrefix(l, "Kubernetes: cluster ") && strings.HasSuffix(l, "· namespace "+ns+" · "+want)
		}); err != nil {
			t.Fatalf("the menu does not show the cluster with %s: %v\n%s", want, err, p.log())
		}
	}
	line("0 sandboxes")

	// A server's engine on the same cluster and state directory.
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kubernetes.Kubeconfig = kubeconfig // the server's, not through the proxy
	kb, err := kubeconn.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: kb, Config: config.Static(cfg), State: st, OwnerID: "tray-cluster-test"})
	defer eng.Close(context.Background())
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	line("1 sandbox")

	click(t, m, traymenu.LabelOpen)
	windowShown(t, p, "cluster-window")
	waitFor(t, "the window's headline to name the cluster", 60*time.Second, func() bool {
		h := p.windowHeadline()
		return strings.HasPrefix(h, "Running · cluster ") && strings.HasSuffix(h, "· namespace "+ns+" · 1 sandbox")
	})

	click(t, m, traymenu.StopAllConfirmLabel(traymenu.State{Sandboxes: 1}))
	d.waitNote(t, "the notification that the sandbox stopped", "Stopped 1 sandbox")
	line("0 sandboxes")
	sel := metav1.ListOptions{LabelSelector: backend.LabelID + "=" + sb.ID}
	waitFor(t, "the sandbox's pod gone from the cluster", 60*time.Second, func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, sel)
		return err == nil && len(pods.Items) == 0
	})

	clusterCutAndBack(t, d, p, m, px, ns)
	for _, n := range d.notes.all() {
		if strings.Contains(n, "Docker") {
			t.Errorf("a notification speaks of Docker on a cluster: %q", n)
		}
	}
	if strings.Contains(p.log(), "msg=docker ") {
		t.Errorf("the tray looked for Docker on a cluster:\n%s", p.log())
	}
	if !strings.Contains(p.log(), "reading the cluster through the server") {
		t.Errorf("the tray did not read the cluster through the server binary (mcp-sandbox backend-serve):\n%s", p.log())
	}
	if n := len(backendServes(p.home)); n == 0 {
		t.Error("no mcp-sandbox backend-serve child runs for the tray and the window")
	}
	p.stop(t)
	waitFor(t, "the backend-serve children to end with the tray and the window", 30*time.Second, func() bool {
		return len(backendServes(p.home)) == 0
	})
}

// backendServes lists the `mcp-sandbox backend-serve` processes running
// with HOME=home: the children of that home's tray and window.
func backendServes(home string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err1 := os.ReadFile(filepath.Join(d, "cmdline"))
		env, err2 := os.ReadFile(filepath.Join(d, "environ"))
		args := strings.Split(string(cmd), "\x00")
		if err1 == nil && err2 == nil && len(args) > 1 && args[1] == "backend-serve" &&
			slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
			out = append(out, d)
		}
	}
	return out
}

// clusterNamespace makes a namespace of the test's own on the cluster,
// deleted after the test, and returns a client of the cluster with it.
func clusterNamespace(ctx context.Context, t *testing.T, kubeconfig string) (*k8s.Clientset, string) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := k8s.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ns := "readers-tray-" + randomHex(t)[:8]
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return cs, ns
}

// clusterCutAndBack cuts the tray's way to the cluster (px) and restores
// it: the menu, a notification and the window's headline say so each
// way.
func clusterCutAndBack(t *testing.T, d *desktop, p *trayProc, m *trayMenu, px *tcpProxy, ns string) {
	t.Helper()
	menu := func(what, suffix string) {
		t.Helper()
		if _, err := m.waitMenu(60*time.Second, func(items []menuItem) bool {
			l := statusLine(items)
			return strings.HasPrefix(l, "Kubernetes: cluster ") && strings.HasSuffix(l, "· namespace "+ns+suffix)
		}); err != nil {
			t.Fatalf("the menu does not say %s: %v\n%s", what, err, p.log())
		}
	}
	px.Cut()
	menu("the cluster is not reachable", " not reachable")
	d.waitNote(t, "the notification that the cluster stopped answering", "The Kubernetes cluster (cluster ", "stopped answering")
	waitFor(t, "the window's headline to say the cluster is not reachable", 60*time.Second, func() bool {
		return strings.HasPrefix(p.windowHeadline(), "Kubernetes cluster not reachable")
	})
	px.Restore(t)
	menu("the cluster is back", " · 0 sandboxes")
	d.waitNote(t, "the notification that the cluster is back", "The Kubernetes cluster is reachable again: cluster ")
	waitFor(t, "the window's headline to say Running again", 60*time.Second, func() bool {
		return strings.HasPrefix(p.windowHeadline(), "Running · cluster ")
	})
}

// proxiedKubeconfig writes a copy of kubeconfig whose clusters' servers
// are reached through a proxy of the test's own (the API server's
// certificate names the loopback address, whatever the port).
func proxiedKubeconfig(t *testing.T, kubeconfig string) (*tcpProxy, string) {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var px *tcpProxy
	for _, c := range kc.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		if px == nil {
			px = startTCPProxy(t, u.Host)
		}
		u.Host = px.addr
		c.Server = u.String()
	}
	if px == nil {
		t.Fatal("no cluster in the kubeconfig")
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return px, path
}
