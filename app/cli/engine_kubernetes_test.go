package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/server"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// deadKubeconfig writes a kubeconfig whose context dead-ctx (also the
// current one) names a loopback port nothing listens on.
func deadKubeconfig(t *testing.T) (path, server string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server = "https://" + l.Addr().String()
	l.Close()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["dead"] = &clientcmdapi.Cluster{Server: server}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "x"}
	kc.Contexts["dead-ctx"] = &clientcmdapi.Context{Cluster: "dead", AuthInfo: "u"}
	kc.CurrentContext = "dead-ctx"
	path = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path, server
}

// kubeEnv writes a config file with backend.kind "kubernetes" and the
// given [kubernetes] keys, and returns an Env using it, with a state
// directory of the test's own and no Docker anywhere it could look.
func kubeEnv(t *testing.T, table string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[backend]\nkind = \"kubernetes\"\n\n[kubernetes]\n"+table), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCP_SANDBOX_STATE_DIR", filepath.Join(dir, "state"))
	t.Setenv("MCP_SANDBOX_CONFIG", cfg)
	var out, errOut bytes.Buffer
	env := map[string]string{"DOCKER_HOST": "unix:///nonexistent/docker.sock", "HOME": dir}
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, ConfigPath: cfg,
		Getenv: func(k string) string { return env[k] }, Interactive: func() bool { return false }}, &out, &errOut
}

// With backend.kind "kubernetes", a context that does not answer and one
// that does not exist are errors naming the context, for every command
// that touches sandboxes, the server and its watchdog: never Docker in
// its place.
func TestKubernetesSelectionRefuses(t *testing.T) {
	kubeconfig, apiURL := deadKubeconfig(t)
	for _, tc := range []struct{ name, table, want string }{
		{"dead port", fmt.Sprintf("kubeconfig = %q\ncontext = \"dead-ctx\"\n", kubeconfig), "context dead-ctx (" + apiURL + ") does not answer"},
		{"current context dead", fmt.Sprintf("kubeconfig = %q\n", kubeconfig), "context (current context) (" + apiURL + ") does not answer"},
		{"missing context", fmt.Sprintf("kubeconfig = %q\ncontext = \"no-such\"\n", kubeconfig), `context no-such: context "no-such" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, args := range [][]string{{"ps"}, {"ps", "--json"}, {"stop", "--all"}, {server.WatchdogCommand, "--owner", "x", "--backend", "kubernetes", "--config-file", ""}} {
				e, out, errOut := kubeEnv(t, tc.table)
				if args[0] == server.WatchdogCommand {
					args[len(args)-1] = e.ConfigPath
				}
				code := Run(ctx, e, args)
				msg := strings.ReplaceAll(errOut.String(), `\"`, `"`) // the watchdog logs in logfmt
				if code != 1 || !strings.Contains(msg, tc.want) || strings.Contains(strings.ToLower(msg), "docker") || out.Len() != 0 {
					t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q, no Docker", args, code, out, msg, tc.want)
				}
			}
			e, _, _ := kubeEnv(t, tc.table)
			// The server starts on nothing, and each tool call says why.
			s, gate, err := openServe(ctx, e, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatalf("serve's set-up: %v", err)
			}
			if _, ok := s.backend.(backend.Unavailable); !ok || s.cli != nil {
				t.Errorf("serve's backend = %T, want none (backend.Unavailable)", s.backend)
			}
			if err := gate(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "restart") {
				t.Errorf("serve's gate: %v, want %q and to restart", err, tc.want)
			}
		})
	}
}

// doctor with backend.kind "kubernetes" and a dead context: exit 1, the
// context check failed with its name in --json, Docker not looked for.
func TestDoctorKubernetesDeadContext(t *testing.T) {
	kubeconfig, server := deadKubeconfig(t)
	e, out, _ := kubeEnv(t, fmt.Sprintf("kubeconfig = %q\ncontext = \"dead-ctx\"\n", kubeconfig))
	if code := Run(context.Background(), e, []string{"doctor", "--json"}); code != 1 {
		t.Errorf("doctor --json: exit %d, want 1", code)
	}
	var r report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "context dead-ctx (" + server + ") does not answer"
	if r.OK || r.Kubernetes == nil || len(r.Kubernetes.Checks) != 1 || r.Kubernetes.Checks[0].OK || !strings.Contains(r.Kubernetes.Checks[0].Detail, want) {
		t.Fatalf("kubernetes report %+v, want a failed context check with %q", r.Kubernetes, want)
	}
	if r.Docker.Chosen != nil || len(r.Docker.Candidates) != 0 || !strings.Contains(r.Docker.Reason, "Docker is not used") {
		t.Errorf("docker report %+v: Docker was looked for", r.Docker)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], want) {
		t.Errorf("problems %q", r.Problems)
	}
	out.Reset()
	Run(context.Background(), e, []string{"doctor"})
	if !strings.Contains(out.String(), "Kubernetes\n  context:   dead-ctx") || !strings.Contains(out.String(), "FAIL  context") {
		t.Errorf("doctor's text:\n%s", out)
	}
}

// On the real cluster: ps with backend.kind "kubernetes" reaches the
// cluster and lists with the cluster and namespace (text and --json).
func TestKubernetesSelectionOnCluster(t *testing.T) {
	kubeconfig := os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("MCP_SANDBOX_TEST_KUBECONFIG is not set (.ci/k8s-up prints a kubeconfig)")
	}
	table := fmt.Sprintf("kubeconfig = %q\nnamespace = \"mcp-sandbox-selection\"\n", kubeconfig)
	e, out, errOut := kubeEnv(t, table)
	code := Run(context.Background(), e, []string{"ps"})
	if code != 0 || !strings.HasPrefix(out.String(), "Kubernetes: cluster ") || !strings.Contains(out.String(), ", namespace mcp-sandbox-selection\n") {
		t.Errorf("ps: exit %d, %q %q", code, out, errOut)
	}
	e, out, _ = kubeEnv(t, table)
	Run(context.Background(), e, []string{"ps", "--json"})
	var got struct{ Backend, Cluster, Namespace string }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Backend != "kubernetes" || got.Cluster == "" || got.Namespace != "mcp-sandbox-selection" {
		t.Errorf("ps --json: %+v %v\n%s", got, err, out)
	}
}

// ps --json carries the cluster and namespace on Kubernetes, nothing more
// on Docker; doctor's lines cannot be forged by a cluster's values.
func TestPSKubernetesPlace(t *testing.T) {
	var b bytes.Buffer
	writePSJSON(&b, nil, &place{Cluster: "prod", Namespace: "sb"})
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["backend"] != "kubernetes" || got["cluster"] != "prod" || got["namespace"] != "sb" || got["sandboxes"] == nil {
		t.Errorf("ps --json on Kubernetes: %v", got)
	}
	b.Reset()
	writePSJSON(&b, nil, nil)
	if strings.TrimSpace(b.String()) != "{\n  \"sandboxes\": []\n}" {
		t.Errorf("ps --json on Docker: %s", b.String())
	}
	var text bytes.Buffer
	printKubernetesSection(&text, &kubernetes.Report{Context: "c\nFAIL  rbac  forged", Cluster: "\x1b[2Jx", Server: "s\u202e",
		Checks: []kubernetes.Check{{Name: "context", OK: true, Detail: "ok\r\n  ok    rbac  forged"}}})
	if lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n"); len(lines) != 4 || strings.ContainsAny(text.String(), "\x1b\r\u202e") {
		t.Errorf("doctor's Kubernetes section forged by the cluster's values:\n%s", text.String())
	}
}
