package kubernetes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// uniqueSpec is testSpec with an id, name and expiry of its own.
func uniqueSpec(expires time.Time) backend.ContainerSpec {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	id := "c" + hex.EncodeToString(b)
	s := testSpec()
	s.Name = backend.NamePrefix + id
	s.Labels = map[string]string{backend.LabelManaged: "true", backend.LabelID: id, labelExpiresAt: expires.UTC().Format(time.RFC3339)}
	return s
}

// nothingLeft fails t if the namespace still holds a pod or a policy.
func nothingLeft(ctx context.Context, t *testing.T, b *Backend) {
	t.Helper()
	pods, err := b.cs.pods(b.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nps, err := b.cs.policies(b.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items)+len(nps.Items) > 0 {
		t.Errorf("left after a failed Create: %d pods, %d network policies", len(pods.Items), len(nps.Items))
	}
}

// A sandbox the cluster cannot start, or that the backend cannot make
// honestly, is an error naming why, and leaves nothing behind.
func TestCreateFailsOnCluster(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		edit func(*backend.ContainerSpec)
		want string
	}{
		{"image missing, pull never", Config{UseAgentSandbox: "never"}, func(s *backend.ContainerSpec) {
			s.Image = "mcp-sandbox-test/absent:0"
		}, "ErrImageNeverPull"},
		{"runtime class missing", Config{UseAgentSandbox: "never", RuntimeClass: "absent-class"}, nil, `"absent-class"`},
		{"runc asked, class runs another handler", Config{UseAgentSandbox: "never", RuntimeClass: "gvisor"}, func(s *backend.ContainerSpec) {
			s.Runtime = "runc"
		}, `runs "runsc"`},
		{"network egress, the runtime gives pods no network", Config{UseAgentSandbox: "never", RuntimeClass: "gvisor"}, func(s *backend.ContainerSpec) {
			s.Network = "egress"
		}, "no network interface but loopback"},
		{"unschedulable", Config{UseAgentSandbox: "never"}, func(s *backend.ContainerSpec) { s.MemoryBytes = 1 << 42 }, "unschedulable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := testBackend(t, c.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			spec := uniqueSpec(time.Now().Add(time.Hour))
			if c.edit != nil {
				c.edit(&spec)
			}
			if _, err := b.EnsureImage(ctx, spec.Image, "never", nil); err != nil && !strings.Contains(c.name, "image missing") {
				t.Fatal(err)
			}
			id, err := b.Create(ctx, spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Create = %q, %v; want an error saying %s", id, err, c.want)
			}
			t.Logf("%s: %v", c.name, err)
			nothingLeft(ctx, t, b)
		})
	}
}

// A sandbox made with network "egress" (runc pods: this cluster's bridge
// gives them an interface) has a network interface besides loopback and a
// NetworkPolicy that denies ingress and allows egress, and is made on its
// own even with a warm pool (whose pods are deny-all). (An allowlist
// sandbox is a deny-all one: TestAllowlistOnCluster runs its proxy.)
func TestEgressOnCluster(t *testing.T) {
	b := testBackend(t, Config{UseAgentSandbox: "auto", WarmPool: map[string]int{"python": 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, n := range []string{"egress"} {
		t.Run(n, func(t *testing.T) {
			spec := uniqueSpec(time.Now().Add(time.Hour))
			spec.Network = n
			spec.Labels[labelLanguage] = "python"
			id, err := b.Create(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Remove(context.WithoutCancel(ctx), id)
			np, err := b.cs.policies(b.namespace).Get(ctx, id, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the sandbox's own policy (not a pool's): %v", err)
			}
			egress := n == "egress"
			if len(np.Spec.Ingress) != 0 || len(np.Spec.PolicyTypes) != 2 || (len(np.Spec.Egress) == 1) != egress {
				t.Errorf("%s sandbox's policy: %+v", n, np.Spec)
			}
			var out bytes.Buffer
			if _, err := b.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"}, Stdout: &out}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s sandbox's interfaces: %q", n, out.String())
			if egress && strings.TrimSpace(out.String()) == "lo" {
				t.Errorf("the egress sandbox has only loopback")
			}
		})
	}
}

// The cluster ends a sandbox at its expires-at label with no server left:
// a plain pod by its activeDeadlineSeconds (its container killed), an
// agent-sandbox Sandbox by its shutdownTime (pod, Sandbox and policy gone).
func TestExpiryOnCluster(t *testing.T) {
	for _, c := range []struct {
		name    string
		cfg     Config
		removed bool
	}{
		{"plain pod", Config{UseAgentSandbox: "never"}, false},
		{"agent-sandbox", Config{UseAgentSandbox: "always", RuntimeClass: "gvisor"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := testBackend(t, c.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			expires := time.Now().Add(8 * time.Second)
			id, err := b.Create(ctx, uniqueSpec(expires))
			if err != nil {
				t.Fatal(err)
			}
			wctx, wcancel := context.WithTimeout(ctx, 70*time.Second)
			defer wcancel()
			ex, err := b.WaitExit(wctx, id)
			if err != nil {
				t.Fatalf("WaitExit: %v (the cluster did not end the sandbox within 60 s of its expiry)", err)
			}
			t.Logf("ended %.1f s after expires-at: %+v", time.Since(expires).Seconds(), ex)
			if !c.removed {
				return
			}
			// Its container ended first (the trap exits 0); the Sandbox,
			// pod and policy follow.
			deadline := time.Now().Add(60 * time.Second)
			for {
				_, sbErr := b.dyn.Resource(b.sandboxGVR).Namespace(b.namespace).Get(ctx, id, metav1.GetOptions{})
				_, podErr := b.cs.pods(b.namespace).Get(ctx, id, metav1.GetOptions{})
				_, npErr := b.cs.policies(b.namespace).Get(ctx, id, metav1.GetOptions{})
				if apierrors.IsNotFound(sbErr) && apierrors.IsNotFound(podErr) && apierrors.IsNotFound(npErr) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("60 s after the sandbox ended: Sandbox %v, pod %v, policy %v; want all gone", sbErr, podErr, npErr)
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	}
}

// Expire moves a Sandbox's shutdownTime (the cluster keeps it past its
// creation-time expiry) and is refused as fixed for a plain pod.
func TestExpireOnCluster(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   Config
		fixed bool
	}{
		{"agent-sandbox", Config{UseAgentSandbox: "always", RuntimeClass: "gvisor"}, false},
		{"plain pod", Config{UseAgentSandbox: "never"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := testBackend(t, c.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			expires := time.Now().Add(6 * time.Second)
			id, err := b.Create(ctx, uniqueSpec(expires))
			if err != nil {
				t.Fatal(err)
			}
			err = b.Expire(ctx, id, time.Now().Add(time.Hour))
			if c.fixed {
				if !errors.Is(err, backend.ErrFixedExpiry) {
					t.Errorf("Expire of a plain pod = %v, want ErrFixedExpiry", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expire: %v", err)
			}
			// Well past the creation-time expiry (the cluster ends an
			// unmoved one within a second of it: TestExpiryOnCluster).
			wctx, wcancel := context.WithDeadline(ctx, expires.Add(15*time.Second))
			defer wcancel()
			if ex, err := b.WaitExit(wctx, id); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the moved sandbox ended: %+v, %v", ex, err)
			}
			if err := b.Remove(ctx, id); err != nil {
				t.Error(err)
			}
		})
	}
}

// Exec ends on the command's exit status, yet loses nothing the command
// wrote on either stream (each is relayed on its own: stderr may still be
// on its way when stdout's end arrives), and a background process holding
// the streams open does not keep it waiting.
func TestExecOutputCompleteOnCluster(t *testing.T) {
	b := testBackend(t, Config{UseAgentSandbox: "never"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := uniqueSpec(time.Now().Add(time.Hour))
	if _, err := b.EnsureImage(ctx, spec.Image, "never", nil); err != nil {
		t.Fatal(err)
	}
	id, err := b.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), id) })
	for i := range 40 {
		var out, errb strings.Builder
		st, err := b.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "echo out; echo err >&2; exit 4"}, Stdout: &out, Stderr: &errb})
		if err != nil || st.ExitCode != 4 || out.String() != "out\n" || errb.String() != "err\n" {
			t.Fatalf("exec %d: %+v, %v, stdout %q, stderr %q", i, st, err, out.String(), errb.String())
		}
	}
	// Usage from inside: the pod's limit, and CPU used between samples.
	if _, err := b.Usage(ctx, id); err != nil {
		t.Fatalf("Usage: %v", err)
	}
	if _, err := b.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"}}); err != nil {
		t.Fatal(err)
	}
	if u, err := b.Usage(ctx, id); err != nil || u.MemoryLimit != uint64(spec.MemoryBytes) || u.MemoryBytes == 0 || u.Pids == 0 || u.CPUPercent <= 0 {
		t.Errorf("Usage after a busy loop = %+v, %v; want the %d-byte limit, memory, pids and CPU in use", u, err, spec.MemoryBytes)
	}
	var out strings.Builder
	st, err := b.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "sleep 1000 & echo started"}, Stdout: &out})
	if err != nil || st.ExitCode != 0 || out.String() != "started\n" {
		t.Errorf("exec leaving a process in the background: %+v, %v, %q", st, err, out.String())
	}
}
