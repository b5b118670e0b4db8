//go:build linux

package dockerhost

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// need skips the test with reason, or fails it when CI=true, where
// everything the tests need must be present.
func need(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s", reason)
	}
	t.Skip(reason)
}

// TestRealDefaultSocket detects the machine's own dockerd on
// /var/run/docker.sock with a bare environment, as an AI client starts the
// server.
func TestRealDefaultSocket(t *testing.T) {
	if _, err := os.Stat("/var/run/docker.sock"); err != nil {
		need(t, "no dockerd on /var/run/docker.sock: "+err.Error())
	}
	opts := Options{
		Getenv: func(string) string { return "" },
		Home:   t.TempDir(),
		GOOS:   "linux",
	}
	cli, r, err := NewClient(context.Background(), opts)
	if err != nil {
		t.Fatalf("detect: %v\n%+v", err, r.Candidates)
	}
	defer cli.Close()
	c := r.Chosen
	if c.Host != "unix:///var/run/docker.sock" || c.Source != "default socket" {
		t.Fatalf("chosen %s (%s), want the default socket; reason: %s", c.Host, c.Source, r.Reason)
	}
	if c.Engine != EngineDocker || c.Version == "" || !strings.HasPrefix(c.OS, "linux/") || c.APIVersion == "" {
		t.Errorf("chosen %+v, want Docker Engine with version, os and api version", *c)
	}
	v, err := cli.ServerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != c.Version {
		t.Errorf("client reached version %s, detected %s", v.Version, c.Version)
	}
	t.Logf("found %s %s (api %s, %s): %s", c.Engine, c.Version, c.APIVersion, c.OS, r.Reason)
}

// TestDockerdTLS starts a second, private dockerd that listens on 127.0.0.1
// with mutual TLS, and reaches it through DOCKER_HOST and through a context.
func TestDockerdTLS(t *testing.T) {
	pki := newTestPKI(t)
	host := startTLSDockerd(t, pki)

	t.Run("DOCKER_HOST with client certs", func(t *testing.T) {
		certs := filepath.Join(t.TempDir(), "certs")
		pki.copyTo(t, certs, "ca.pem", "cert.pem", "key.pem")
		t.Setenv("DOCKER_HOST", host)
		t.Setenv("DOCKER_TLS_VERIFY", "1")
		t.Setenv("DOCKER_CERT_PATH", certs)
		t.Setenv("DOCKER_CONTEXT", "")
		r := Detect(context.Background(), Options{Home: t.TempDir(), Root: t.TempDir()}) // Getenv: os.Getenv
		c := r.Candidates[0]
		if !c.OK || c.Source != "DOCKER_HOST" || c.Engine != EngineDocker || c.Version == "" || r.Chosen != &r.Candidates[0] {
			t.Fatalf("DOCKER_HOST %s: %+v; reason: %s", host, c, r.Reason)
		}
		if c.TLS == nil || c.TLS.SkipVerify {
			t.Errorf("tls %+v, want verified TLS", c.TLS)
		}
	})
	t.Run("DOCKER_HOST without client certs", func(t *testing.T) {
		certs := filepath.Join(t.TempDir(), "certs")
		pki.copyTo(t, certs, "ca.pem")
		t.Setenv("DOCKER_HOST", host)
		t.Setenv("DOCKER_TLS_VERIFY", "1")
		t.Setenv("DOCKER_CERT_PATH", certs)
		t.Setenv("DOCKER_CONTEXT", "")
		r := Detect(context.Background(), Options{Home: t.TempDir(), Root: t.TempDir()})
		c := r.Candidates[0]
		if c.OK || !strings.HasPrefix(c.Error, "did not answer: ") || r.Chosen != nil {
			t.Fatalf("DOCKER_HOST %s without a client certificate: %+v", host, c)
		}
		if !strings.Contains(r.Reason, "does not answer") || !strings.Contains(r.Hint, "DOCKER_HOST="+host+" (from the environment) does not answer: ") {
			t.Errorf("reason %q, hint %q", r.Reason, r.Hint)
		}
		t.Logf("error: %s", c.Error)
	})
	t.Run("DOCKER_HOST with a foreign CA", func(t *testing.T) {
		certs := filepath.Join(t.TempDir(), "certs")
		pki.copyTo(t, certs, "cert.pem", "key.pem")
		b, err := os.ReadFile(pki.otherCA)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(certs, "ca.pem"), b)
		w := newWorld(t)
		w.env = map[string]string{"DOCKER_HOST": host, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certs}
		c := w.detect().Candidates[0]
		if c.OK || !strings.Contains(c.Error, "certificate") {
			t.Fatalf("server with an unknown CA: %+v", c)
		}
	})
	t.Run("context", func(t *testing.T) {
		w := newWorld(t)
		cfg := filepath.Join(w.home, ".docker")
		writeConfig(t, cfg, "tls-box")
		writeContext(t, cfg, "tls-box", host, false, pki, "ca.pem", "cert.pem", "key.pem")
		cli, r, err := NewClient(context.Background(), w.options())
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if r.Chosen.Source != "context tls-box" || !r.Chosen.OK {
			t.Fatalf("chosen %+v", r.Chosen)
		}
		if _, err := cli.Info(context.Background()); err != nil {
			t.Errorf("client for the context: %v", err)
		}
	})
}

// privateBridge creates a bridge interface with an address for a second
// dockerd and deletes it when the test ends.
func privateBridge(t *testing.T) string {
	t.Helper()
	const name = "mcpsbxtls0"
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	_ = run("link", "del", name)
	for _, args := range [][]string{
		{"link", "add", "name", name, "type", "bridge"},
		{"addr", "add", "10.213.77.1/24", "dev", name},
		{"link", "set", name, "up"},
	} {
		if err := run(args...); err != nil {
			need(t, "a private bridge for the second dockerd: "+err.Error())
		}
	}
	t.Cleanup(func() { _ = run("link", "del", name) })
	return name
}

// startTLSDockerd starts dockerd with its own roots, no networking, and a
// TLS listener on a free loopback port; it returns the tcp:// host and stops
// the daemon when the test ends.
func startTLSDockerd(t *testing.T, pki *testPKI) string {
	t.Helper()
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		need(t, "dockerd is not installed")
	}
	if os.Geteuid() != 0 {
		need(t, "dockerd needs root")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sock := filepath.Join(dir, "d.sock")
	writeFile(t, filepath.Join(dir, "daemon.json"), []byte("{}"))
	bridge := privateBridge(t)

	logs := &tailBuffer{max: 64 << 10}
	cmd := exec.Command(dockerd,
		"--config-file", filepath.Join(dir, "daemon.json"),
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"),
		"--containerd-namespace", "mcp-sandbox-dockerhost-test",
		"--containerd-plugins-namespace", "mcp-sandbox-dockerhost-test-plugins",
		"--storage-driver", "vfs",
		// A bridge of its own: with --bridge=none dockerd deletes docker0,
		// which belongs to the machine's main engine.
		"--bridge", bridge, "--iptables=false", "--ip-masq=false", "--ip-forward=false",
		"-H", "unix://"+sock,
		"-H", "tcp://"+addr,
		"--tlsverify",
		"--tlscacert", pki.ca,
		"--tlscert", pki.serverCert,
		"--tlskey", pki.serverKey,
	)
	cmd.Stdout = logs
	cmd.Stderr = logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dockerd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			t.Logf("dockerd did not stop on SIGTERM; killing it")
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})

	// Wait for the private unix socket to answer.
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Ping(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case werr := <-exited:
			exited <- werr
			t.Fatalf("dockerd exited (%v):\n%s", werr, tail(logs.String(), 3000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dockerd did not answer within 60s: %v\n%s", err, tail(logs.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("tcp://%s", addr)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
