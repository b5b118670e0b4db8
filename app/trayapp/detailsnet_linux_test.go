package trayapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// netCode asks, through the sandbox's proxy, for an allowed host and port,
// another port of that host, and a 253-character name: the last two are
// refused with 403.
const netCode = `import urllib.request, urllib.error
for url in ("http://127.0.0.2:%d/ok", "http://127.0.0.2:%d/no", "http://%s/no"):
    try:
        print(urllib.request.urlopen(url, timeout=20).read().decode())
    except urllib.error.HTTPError as e:
        print(e.code)
`

// TestDetailsViewOfAllowlistSandbox: a server (as a client starts it)
// makes an allowlist sandbox whose program reaches one host and is
// refused two, one of them a 253-character name; its record in the state
// directory gets the counters; the window binary, another process, shows
// the Sandboxes tab at 800×560 and the sandbox's details view (both
// screenshot for a person to look at) and lives on when the sandbox goes.
func TestDetailsViewOfAllowlistSandbox(t *testing.T) {
	skipUnderRace(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	if _, err := exec.LookPath("xwininfo"); err != nil {
		apptest.Missing(t, "xwininfo (apt-get install x11-utils)")
	}
	ok, refused := hostServer(t), hostServer(t)
	win := apptest.Binary(t, WindowBinary)
	server := apptest.Binary(t, "mcp-sandbox")
	home := t.TempDir()
	if err := apptest.WriteHome(home, fmt.Sprintf("\n[network]\nask = false\nallow_domains = [\"127.0.0.2:%d\", \"pypi.org\"]\n", ok)); err != nil {
		t.Fatal(err)
	}
	display, stopX, err := apptest.NewXvfb()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopX)
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return os.Getenv(k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := bundled.Connect(ctx, bundled.ConnectOptions{Path: server, Getenv: env, ClientName: "claude-ai"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var created struct {
		ID string `json:"sandbox_id"`
	}
	if _, err := s.Call(ctx, "sandbox_create", map[string]any{"language": "python", "network": "allowlist"}, &created); err != nil || created.ID == "" {
		t.Fatalf("sandbox_create: %v %q", err, created.ID)
	}
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".io"
	if _, err := s.Call(ctx, "run_code", map[string]any{"sandbox_id": created.ID, "code": fmt.Sprintf(netCode, ok, refused, long)}, nil); err != nil {
		t.Fatalf("run_code: %v", err)
	}
	st, err := state.Open(filepath.Join(home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the record's counters", 15*time.Second, func() bool {
		r, err := st.ReadRecord(created.ID)
		return err == nil && r.Traffic != nil && r.Traffic.RefusedConns == 2 && r.Traffic.AllowedConns == 1 && r.Traffic.Open == 0
	})

	xenv := []string{"DISPLAY=" + display, "PATH=" + os.Getenv("PATH"), "HOME=" + home}
	// The Sandboxes tab alone first (a details window would cover it).
	tab := startWin(t, win, home, display, "--tab", ui.TabSandboxes, "--size", "800x560")
	waitForWindow(t, xenv, ui.Title)
	time.Sleep(5 * time.Second) // Docker found, the list and the record read
	shotWindow(t, xenv, ui.Title, "sandboxes-allowlist-800x560")
	tab.stop(t)

	title := "Sandbox " + created.ID + " - " + ui.Title
	details := startWin(t, win, home, display, "--tab", ui.TabSandboxes, "--details", created.ID)
	waitForWindow(t, xenv, title)
	time.Sleep(5 * time.Second)
	shotWindow(t, xenv, title, "details-allowlist")

	if _, err := s.Call(ctx, "sandbox_stop", map[string]any{"sandbox_id": created.ID}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the record to go with the sandbox", 15*time.Second, func() bool {
		_, err := st.ReadRecord(created.ID)
		return errors.Is(err, state.ErrNoRecord)
	})
	time.Sleep(3 * time.Second) // the window's list follows
	details.stop(t)
}

// winProc is a window binary started by startWin.
type winProc struct {
	cmd    *exec.Cmd
	done   chan error
	stderr *bytes.Buffer
}

// startWin starts the window binary win with args on display, for the
// user whose home is home.
func startWin(t *testing.T, win, home, display string, args ...string) *winProc {
	t.Helper()
	w := &winProc{cmd: exec.Command(win, args...), done: make(chan error, 1), stderr: &bytes.Buffer{}}
	w.cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + display, noBus(t), "LANG=C.UTF-8"}
	w.cmd.Stderr = w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// stop checks the window still runs, then ends it with SIGTERM, which
// it must obey cleanly within 20 s.
func (w *winProc) stop(t *testing.T) {
	t.Helper()
	select {
	case err := <-w.done:
		t.Fatalf("the window ended early: %v\n%s", err, w.stderr.String())
	default:
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-w.done:
		if err != nil || strings.Contains(w.stderr.String(), "panic") {
			t.Errorf("the window exited with %v:\n%s", err, w.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Error("the window did not end within 20 s of SIGTERM")
	}
}

// waitForWindow waits for an X window titled title.
func waitForWindow(t *testing.T, xenv []string, title string) {
	t.Helper()
	waitFor(t, "the window "+title, 60*time.Second, func() bool {
		q := exec.Command("xwininfo", "-name", title)
		q.Env = xenv
		return q.Run() == nil
	})
}

// hostServer serves a one-line answer on 127.0.0.2 and returns its port.
func hostServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this host: %v", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}
