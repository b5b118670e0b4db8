package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// KubeOptions configures the Kubernetes rows: the server runs with
// backend.kind = "kubernetes" on the cluster, and the baselines are
// kubectl commands on the same cluster and namespace.
type KubeOptions struct {
	// Server is the mcp-sandbox binary to measure.
	Server string
	// Kubeconfig, Context and Namespace name the cluster (empty: kubectl's
	// and the backend's defaults).
	Kubeconfig, Context, Namespace string
	// RuntimeClass is both sides' runtimeClassName (empty: the cluster's
	// default).
	RuntimeClass string
	// WarmPool is the server's kubernetes.warm_pool size for python; 0:
	// every create makes a Sandbox (or pod) of its own.
	WarmPool int
	// Image is the Python image both sides run; Pull the server's
	// images.pull (empty: "missing").
	Image, Pull string
	// Kubectl is the kubectl binary; empty: found on PATH.
	Kubectl string
	// Log receives a line per step; nil: none.
	Log io.Writer
}

// The Kubernetes comparison names, in report order.
const (
	KubeCreate   = "k8s sandbox_create  vs  kubectl run + wait Ready"
	KubeWarm     = "k8s warm run_code print(1)  vs  kubectl exec python3 -c"
	KubeExecTrue = "k8s sandbox_exec true  vs  kubectl exec true"
	KubeStop     = "k8s sandbox_stop  vs  kubectl delete pod --wait=false"
)

// KubeHarness runs the Kubernetes rows.
type KubeHarness struct {
	o       KubeOptions
	dir     string
	srv     *server
	warmID  string // our sandbox for the warm calls
	basePod string // the baseline's pod for kubectl exec
	rounds  int
	ours    map[string][]time.Duration
	base    map[string][]time.Duration
}

// kubeConfig is the measured server's config file.
func kubeConfig(o KubeOptions) string {
	pool := "{}"
	if o.WarmPool > 0 {
		pool = fmt.Sprintf("{ python = %d }", o.WarmPool)
	}
	return fmt.Sprintf(`[backend]
kind = "kubernetes"

[kubernetes]
kubeconfig = %q
context = %q
namespace = %q
runtime_class = %q
warm_pool = %s

[images]
python = %q
pull = %q

[limits]
max_sandboxes = 16

[pool]
size = 0
`, o.Kubeconfig, o.Context, o.Namespace, o.RuntimeClass, pool, o.Image, o.Pull)
}

// StartKube starts the server on the cluster, makes the sandbox and the
// baseline pod the warm calls use, and warms both up once.
func StartKube(ctx context.Context, o KubeOptions) (h *KubeHarness, err error) {
	if o.Pull == "" {
		o.Pull = "missing"
	}
	if o.Kubectl == "" {
		if o.Kubectl, err = exec.LookPath("kubectl"); err != nil {
			return nil, errors.New("kubectl is not on PATH (the Kubernetes baselines are kubectl commands): name it with --kubectl")
		}
	}
	dir, err := os.MkdirTemp("", "mcp-sandbox-bench-k8s")
	if err != nil {
		return nil, err
	}
	// The deferred Close closes this harness, not the named result: a
	// failed start returns nil, and Close on nil must not hide err.
	made := &KubeHarness{o: o, dir: dir, ours: map[string][]time.Duration{}, base: map[string][]time.Duration{}}
	h = made
	defer func() {
		if err != nil {
			made.Close()
		}
	}()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(kubeConfig(o)), 0o600); err != nil {
		return nil, err
	}
	if h.srv, err = startServerConfig(ctx, o.Server, dir, cfg); err != nil {
		return nil, err
	}
	if h.warmID, err = h.createOurs(ctx); err != nil {
		return nil, err
	}
	if h.basePod, err = h.kubectlRun(ctx); err != nil {
		return nil, fmt.Errorf("the kubectl baseline pod could not run (%w): the Kubernetes rows need it to compare with", err)
	}
	if _, err := h.srv.runCode(ctx, map[string]any{"code": "print(1)", "sandbox_id": h.warmID}, "1\n"); err != nil {
		return nil, err
	}
	if _, err := h.kubectl(ctx, "exec", h.basePod, "--", "python3", "-c", "print(1)"); err != nil {
		return nil, err
	}
	// The first claim waits for the pool to fill: one untimed round of
	// create and stop lets it.
	id, err := h.createOurs(ctx)
	if err != nil {
		return nil, err
	}
	return h, h.srv.call(ctx, "sandbox_stop", map[string]any{"sandbox_id": id}, nil)
}

// kubectl runs kubectl on the cluster and namespace and returns its
// trimmed stdout.
func (h *KubeHarness) kubectl(ctx context.Context, args ...string) (string, error) {
	var pre []string
	if h.o.Kubeconfig != "" {
		pre = append(pre, "--kubeconfig", h.o.Kubeconfig)
	}
	if h.o.Context != "" {
		pre = append(pre, "--context", h.o.Context)
	}
	if h.o.Namespace != "" {
		pre = append(pre, "--namespace", h.o.Namespace)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, h.o.Kubectl, append(pre, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// kubectlRun is the baseline's create: a pod of the image under the
// runtime class, running (Ready). The pod passes the Pod Security
// "restricted" level (a namespace labelled so, as docs/kubernetes.md
// asks, rejects any other), as the server's pods do.
func (h *KubeHarness) kubectlRun(ctx context.Context) (string, error) {
	name := randomName("mcp-sandbox-bench-")
	over, err := baselineOverrides(name, h.o.RuntimeClass)
	if err != nil {
		return "", err
	}
	args := []string{"run", name, "--image", h.o.Image, "--restart=Never", "--image-pull-policy=IfNotPresent",
		"--override-type=strategic", "--overrides=" + over}
	if _, err := h.kubectl(ctx, append(args, "--", "sleep", "86400")...); err != nil {
		return "", err
	}
	if _, err := h.kubectl(ctx, "wait", "--for=condition=Ready", "pod/"+name, "--timeout=120s"); err != nil {
		_, _ = h.kubectl(context.WithoutCancel(ctx), "delete", "pod", name, "--wait=false")
		return "", err
	}
	return name, nil
}

// baselineOverrides is the baseline pod's spec beyond kubectl run's: the
// runtime class, and what Pod Security's "restricted" level asks (a
// non-root user, no privilege escalation, no capabilities, the runtime's
// seccomp profile).
func baselineOverrides(name, runtimeClass string) (string, error) {
	type m = map[string]any
	spec := m{
		"securityContext": m{"runAsNonRoot": true, "runAsUser": 65534, "runAsGroup": 65534, "seccompProfile": m{"type": "RuntimeDefault"}},
		"containers": []m{{"name": name, "securityContext": m{
			"allowPrivilegeEscalation": false, "capabilities": m{"drop": []string{"ALL"}}}}},
	}
	if runtimeClass != "" {
		spec["runtimeClassName"] = runtimeClass
	}
	b, err := json.Marshal(m{"spec": spec})
	return string(b), err
}

func (h *KubeHarness) createOurs(ctx context.Context) (string, error) {
	var out struct {
		SandboxID string `json:"sandbox_id"`
	}
	err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python"}, &out)
	return out.SandboxID, err
}

// timed runs f, after the settle pause every timed side has, and records
// its duration under name, ours or the baseline's.
func (h *KubeHarness) timed(ctx context.Context, name string, ours bool, f func() error) error {
	pause(ctx)
	start := time.Now()
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if ours {
		h.ours[name] = append(h.ours[name], time.Since(start))
	} else {
		h.base[name] = append(h.base[name], time.Since(start))
	}
	return nil
}

// Round measures each row once, ours then the baseline's (the other way
// round every other round): a create and the stop of what it made, a warm
// run_code and a sandbox_exec true.
func (h *KubeHarness) Round(ctx context.Context) error {
	sides := []bool{true, false}
	if h.rounds%2 == 1 {
		sides[0], sides[1] = false, true
	}
	for _, ours := range sides {
		if err := h.createAndStop(ctx, ours); err != nil {
			return err
		}
	}
	for _, ours := range sides {
		var err error
		if ours {
			err = h.timed(ctx, KubeWarm, true, func() error {
				_, err := h.srv.runCode(ctx, map[string]any{"code": "print(1)", "sandbox_id": h.warmID}, "1\n")
				return err
			})
		} else {
			err = h.timed(ctx, KubeWarm, false, func() error {
				_, err := h.kubectl(ctx, "exec", h.basePod, "--", "python3", "-c", "print(1)")
				return err
			})
		}
		if err != nil {
			return err
		}
		if ours {
			err = h.timed(ctx, KubeExecTrue, true, func() error {
				return h.srv.execTrue(ctx, h.warmID)
			})
		} else {
			err = h.timed(ctx, KubeExecTrue, false, func() error {
				_, err := h.kubectl(ctx, "exec", h.basePod, "--", "true")
				return err
			})
		}
		if err != nil {
			return err
		}
	}
	h.rounds++
	return nil
}

// createAndStop times a create, then the stop of what it made.
func (h *KubeHarness) createAndStop(ctx context.Context, ours bool) error {
	if ours {
		if err := h.waitPooled(ctx); err != nil {
			return err
		}
	}
	var id string
	err := h.timed(ctx, KubeCreate, ours, func() (err error) {
		if ours {
			id, err = h.createOurs(ctx)
		} else {
			id, err = h.kubectlRun(ctx)
		}
		return err
	})
	if err != nil {
		return err
	}
	return h.timed(ctx, KubeStop, ours, func() error {
		if ours {
			return h.srv.call(ctx, "sandbox_stop", map[string]any{"sandbox_id": id}, nil)
		}
		_, err := h.kubectl(ctx, "delete", "pod", id, "--wait=false")
		return err
	})
}

// waitPooled waits, untimed, until the server's warm pool holds a ready
// sandbox again (as the Docker rows wait for theirs), so that each create
// measures a claim and not the pool's refill; without a pool it returns at
// once.
func (h *KubeHarness) waitPooled(ctx context.Context) error {
	if h.o.WarmPool <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, poolWait)
	defer cancel()
	pool := kubernetes.PoolName("python")
	for {
		n, err := h.kubectl(ctx, "get", "sandboxwarmpools."+kubernetes.ExtensionsGroup, pool, "-o", "jsonpath={.status.readyReplicas}")
		if err == nil && n != "" && n != "0" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the warm pool %s did not refill within %v (last: %q, %v)", pool, poolWait, n, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Report summarises the rounds taken.
func (h *KubeHarness) Report() Report {
	rt := h.o.RuntimeClass
	if rt != "" {
		rt = "RuntimeClass " + rt
	}
	var ver struct {
		Server struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	out, _ := h.kubectl(context.Background(), "version", "-o", "json")
	_ = json.Unmarshal([]byte(out), &ver)
	v := ver.Server.GitVersion
	rep := Report{Rounds: h.rounds, Image: h.o.Image, Docker: "Kubernetes " + v, Runtime: rt, CPUs: runtime.NumCPU(), When: time.Now().UTC()}
	for _, name := range []string{KubeCreate, KubeWarm, KubeExecTrue, KubeStop} {
		o, b := summarize(h.ours[name]), summarize(h.base[name])
		rep.Comparisons = append(rep.Comparisons, Comparison{Name: name, Ours: o, Baseline: b, Ratio: ratio(o.Median, b.Median), P95Ratio: ratio(o.P95, b.P95)})
	}
	return rep
}

// WriteKubeText writes the Kubernetes rows as a table for people.
func (r Report) WriteKubeText(w io.Writer, warmPool int) error {
	var b strings.Builder
	pool := "no warm pool"
	if warmPool > 0 {
		pool = fmt.Sprintf("warm_pool python = %d", warmPool)
	}
	fmt.Fprintf(&b, "MCP Sandbox on Kubernetes: %d interleaved rounds, image %s, %s, %s, %s, %d CPUs, %s\n\n",
		r.Rounds, r.Image, r.Docker, r.Runtime, pool, r.CPUs, r.When.Format(time.RFC3339))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "comparison\tours median / p95 (ms)\tkubectl median / p95 (ms)\tratio (p95)")
	for _, c := range r.Comparisons {
		fmt.Fprintf(tw, "%s\t%s / %s\t%s / %s\t%.3f (%.3f)\n", c.Name, ms(c.Ours.Median), ms(c.Ours.P95),
			ms(c.Baseline.Median), ms(c.Baseline.P95), c.Ratio, c.P95Ratio)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// Close stops the server (which removes its sandboxes) and deletes the
// baseline pod.
func (h *KubeHarness) Close() error {
	if h == nil {
		return nil
	}
	var errs []error
	if h.srv != nil {
		errs = append(errs, h.srv.close())
	}
	if h.basePod != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := h.kubectl(ctx, "delete", "pod", h.basePod, "--wait=false")
		errs = append(errs, err)
		cancel()
	}
	errs = append(errs, os.RemoveAll(h.dir))
	return errors.Join(errs...)
}
