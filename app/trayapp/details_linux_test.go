package trayapp

import (
	"bytes"
	"context"
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
)

// plotCode draws a line chart into plot.png (pure Python: the test image
// has no matplotlib) and writes data.csv, as an AI's analysis would.
const plotCode = `import struct, zlib, math
w, h = 240, 160
px = [[(255, 255, 255)] * w for _ in range(h)]
for x in range(w):
    y = int(h / 2 - 60 * math.sin(x / 20))
    for d in (-1, 0, 1):
        px[min(h - 1, max(0, y + d))][x] = (31, 119, 180)
raw = b"".join(b"\x00" + bytes(c for p in row for c in p) for row in px)
def chunk(t, data):
    return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open("/workspace/plot.png", "wb").write(png)
with open("/workspace/data.csv", "w") as f:
    f.write("x,sin\n" + "\n".join(f"{x},{math.sin(x / 20):.3f}" for x in range(0, 240, 20)) + "\n")
print("saved plot.png and data.csv")
`

// TestDetailsViewOfPythonSandbox: a server (as a client starts it) makes a
// python sandbox that draws a plot and writes a file; its transcript file
// appears in the state directory; the window binary, another process,
// opens the sandbox's details view (--details), which is screenshot; the
// window lives on when the sandbox is stopped under it.
func TestDetailsViewOfPythonSandbox(t *testing.T) {
	skipUnderRace(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	if _, err := exec.LookPath("xwininfo"); err != nil {
		apptest.Missing(t, "xwininfo (apt-get install x11-utils)")
	}
	win := apptest.Binary(t, WindowBinary)
	server := apptest.Binary(t, "mcp-sandbox")
	home := t.TempDir()
	if err := apptest.WriteHome(home, ""); err != nil {
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
	if _, err := s.Call(ctx, "sandbox_create", map[string]any{"language": "python"}, &created); err != nil || created.ID == "" {
		t.Fatalf("sandbox_create: %v %q", err, created.ID)
	}
	if _, err := s.Call(ctx, "run_code", map[string]any{"sandbox_id": created.ID, "code": plotCode}, nil); err != nil {
		t.Fatalf("run_code: %v", err)
	}
	if _, err := s.Call(ctx, "sandbox_exec", map[string]any{"sandbox_id": created.ID, "command": "ls -l /workspace && wc -l /workspace/data.csv"}, nil); err != nil {
		t.Fatalf("sandbox_exec: %v", err)
	}
	logFile := filepath.Join(home, ".local", "state", "mcp-sandbox", "sandboxes", created.ID+".log")
	waitFor(t, "the transcript file", 15*time.Second, func() bool {
		b, _ := os.ReadFile(logFile)
		return bytes.Contains(b, []byte("saved plot.png")) && bytes.Contains(b, []byte("wc -l"))
	})

	cmd := exec.Command(win, "--tab", ui.TabSandboxes, "--details", created.ID)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + display, noBus(t), "LANG=C.UTF-8"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	title := "Sandbox " + created.ID + " - " + ui.Title
	xenv := []string{"DISPLAY=" + display, "PATH=" + os.Getenv("PATH"), "HOME=" + home}
	waitFor(t, "the details window", 60*time.Second, func() bool {
		q := exec.Command("xwininfo", "-name", title)
		q.Env = xenv
		return q.Run() == nil
	})
	time.Sleep(6 * time.Second) // Docker found, the list, a usage sample and the files in
	shotWindow(t, xenv, title, "details-python-plot")
	// The window lists the server as running now, with the sandbox it
	// owns (its info file beside its held lock).
	winLog := filepath.Join(home, ".local", "state", "mcp-sandbox", "logs", "window.log")
	waitFor(t, "the window to list the server and its sandbox", 15*time.Second, func() bool {
		b, _ := os.ReadFile(winLog)
		return bytes.Contains(b, []byte(`msg="servers running now" count=1 sandboxes=1`))
	})

	// The sandbox goes while its view is open: the window lives on.
	if _, err := s.Call(ctx, "sandbox_stop", map[string]any{"sandbox_id": created.ID}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the transcript file to go with the sandbox", 15*time.Second, func() bool {
		_, err := os.Stat(logFile)
		return os.IsNotExist(err)
	})
	time.Sleep(4 * time.Second) // the window's list follows the engine's events
	select {
	case err := <-done:
		t.Fatalf("the window ended when the sandbox went: %v\n%s", err, stderr.String())
	default:
	}
	shotWindow(t, xenv, title, "details-python-gone")
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil || strings.Contains(stderr.String(), "panic") {
			t.Errorf("the window exited with %v:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Error("the window did not end within 20 s of SIGTERM")
	}
}

// shotWindow saves the X window titled title to name.png in the
// screenshot directory.
func shotWindow(t *testing.T, env []string, title, name string) {
	t.Helper()
	shot := filepath.Join(screenshotDir(t), name+".png")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	imp := exec.CommandContext(ctx, "import", "-window", title, shot)
	imp.Env = env
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("import -window %q: %v %s", title, err, out)
	}
	t.Logf("screenshot: %s", shot)
}
