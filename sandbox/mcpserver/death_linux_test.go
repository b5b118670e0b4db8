//go:build linux

package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"golang.org/x/sys/unix"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// goneWithin is how long a dead server's containers and volumes may
// outlive it.
const goneWithin = 15 * time.Second

// TestServerDeathLeavesNothing: however the server ends — its client
// closes its end of stdout while a call streams progress, stops reading
// and then signals it or closes stdin, or it is SIGKILLed (alone or with
// its process group) — its sandbox, its warm pool and their volumes are
// gone within goneWithin, and no other server is started. A server that
// could end cleanly exits within the same time and says "stopping".
func TestServerDeathLeavesNothing(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	for _, tc := range []struct {
		name        string
		stopReading bool // the client stops reading stdout first (and waits until it is full)
		end         func(t *testing.T, s *rawServer)
		clean       bool // the server can log "stopping" and exit on its own
	}{
		{"client closes its end mid-stream", false, func(t *testing.T, s *rawServer) { s.out.Close() }, true},
		{"stdin EOF", false, func(t *testing.T, s *rawServer) { s.in.Close() }, true},
		{"stops reading, then stdin EOF", true, func(t *testing.T, s *rawServer) { s.in.Close() }, true},
		{"stops reading, then SIGTERM", true, func(t *testing.T, s *rawServer) { s.signal(syscall.SIGTERM) }, true},
		{"stops reading, then SIGINT", true, func(t *testing.T, s *rawServer) { s.signal(syscall.SIGINT) }, true},
		{"stops reading, then SIGHUP", true, func(t *testing.T, s *rawServer) { s.signal(syscall.SIGHUP) }, true},
		{"SIGKILL", false, func(t *testing.T, s *rawServer) { s.signal(syscall.SIGKILL) }, false},
		{"SIGKILL of its process group", true, func(t *testing.T, s *rawServer) { syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }, false},
		{"its watchdog killed, then SIGKILL", false, func(t *testing.T, s *rawServer) { s.replaceWatchdog(t); s.signal(syscall.SIGKILL) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := poolEnv(t, 1)
			s := startRaw(t, env)
			owner := s.liveSandboxAndPool(t, cli)
			s.checkWatchdogFDs(t)
			s.stream(t)
			if tc.stopReading {
				s.waitStdoutFull(t)
			}
			start := time.Now()
			tc.end(t, s)
			waitOwnerGone(t, cli, owner, goneWithin)
			t.Logf("everything of the server gone %v after it was ended", time.Since(start).Round(time.Millisecond))
			if !tc.clean {
				// Its watchdog removed them, not the start-up reaping of
				// some other server on the engine.
				waitWatchdogReport(t, env, owner)
				s.waitLeakedClosed(t)
				return
			}
			select {
			case <-s.exited:
			case <-time.After(goneWithin):
				t.Fatalf("the server did not exit\nstderr:\n%s", s.stderr.String())
			}
			if !strings.Contains(s.stderr.String(), "stopping") {
				t.Errorf("the server did not log \"stopping\":\n%s", s.stderr.String())
			}
			s.waitLeakedClosed(t)
		})
	}
}

// rawServer is the real server driven over raw JSON-RPC, with the client's
// ends of its stdio as files the test closes or stops reading.
type rawServer struct {
	cmd    *exec.Cmd
	in     *os.File // the client's end of the server's stdin
	out    *os.File // the client's end of the server's stdout (a small pipe)
	dec    *json.Decoder
	leaked *os.File // the read end of a pipe whose write end the server inherited
	stderr *clitest.Buffer
	exited chan struct{}
	id     int
	sbID   string
}

func startRaw(t *testing.T, env []string) *rawServer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A one-page pipe fills with a few progress notifications.
	if _, err := unix.FcntlInt(outR.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Fatal(err)
	}
	leakR, leakW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{in: inW, out: outR, leaked: leakR, stderr: &clitest.Buffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(serverBin(t), "serve")
	s.cmd.Env = env
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = inR, outW, s.stderr
	// A pipe leaked to the server beside its stdio, as some clients do:
	// once the server is gone, nothing of it may hold it open.
	s.cmd.ExtraFiles = []*os.File{leakW}
	// A group of its own, so that the test can signal the group.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	leakW.Close()
	s.dec = json.NewDecoder(bufio.NewReader(outR))
	go func() { s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		s.in.Close()
		s.out.Close()
		s.leaked.Close()
		s.cmd.Process.Kill()
		<-s.exited
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr.String())
		}
	})
	s.request(t, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "death-test", "version": "1"}})
	s.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func (s *rawServer) send(t *testing.T, msg map[string]any) {
	t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
}

func (s *rawServer) signal(sig syscall.Signal) { s.cmd.Process.Signal(sig) }

// request sends a request and returns its result, skipping notifications.
func (s *rawServer) request(t *testing.T, method string, params map[string]any) json.RawMessage {
	t.Helper()
	s.id++
	s.send(t, map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	for {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := s.dec.Decode(&m); err != nil {
			t.Fatalf("read the answer to %s: %v\nstderr:\n%s", method, err, s.stderr.String())
		}
		if m.ID != nil && *m.ID == s.id {
			if m.Error != nil {
				t.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result
		}
	}
}

// liveSandboxAndPool creates a sandbox, waits for the warm pool to hold
// one, and returns the server's owner id.
func (s *rawServer) liveSandboxAndPool(t *testing.T, cli *client.Client) string {
	t.Helper()
	res := s.request(t, "tools/call", map[string]any{"name": "sandbox_create", "arguments": map[string]any{}})
	var r struct {
		IsError bool `json:"isError"`
		Struct  struct {
			SandboxID string `json:"sandbox_id"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.IsError || r.Struct.SandboxID == "" {
		t.Fatalf("sandbox_create: %s (%v)", res, err)
	}
	s.sbID = r.Struct.SandboxID
	ins, err := cli.ContainerInspect(context.Background(), backend.ContainerName(s.sbID))
	if err != nil {
		t.Fatal(err)
	}
	owner := ins.Config.Labels[backend.LabelOwner]
	t.Cleanup(func() { removeOwner(cli, owner) })
	deadline := time.Now().Add(60 * time.Second)
	for {
		list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: ownerFilter(owner, backend.LabelPool+"=true")})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the warm pool did not fill\nstderr:\n%s", s.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Its sandbox and pool, and their volumes where the engine makes them
	// (Podman gives these containers none).
	wantVols := 0
	for _, m := range ins.Mounts {
		if m.Type == mount.TypeVolume {
			wantVols = 2
		}
	}
	c, v := ownerLeft(t, cli, owner)
	if c < 2 || v < wantVols {
		t.Fatalf("%d containers and %d volumes of the server before it ends; want its sandbox and pool and %d volumes", c, v, wantVols)
	}
	return owner
}

// stream starts a sandbox_exec that streams progress for a minute, and
// waits for its first notification.
func (s *rawServer) stream(t *testing.T) {
	t.Helper()
	s.id++
	s.send(t, map[string]any{"jsonrpc": "2.0", "id": s.id, "method": "tools/call", "params": map[string]any{
		"_meta":     map[string]any{"progressToken": "stream"},
		"name":      "sandbox_exec",
		"arguments": map[string]any{"sandbox_id": s.sbID, "command": "l=$(printf '%0400d' 0); i=0; while [ $i -lt 1200 ]; do echo $i $l; i=$((i+1)); sleep 0.05; done"},
	}})
	for {
		var m struct {
			Method string `json:"method"`
		}
		if err := s.dec.Decode(&m); err != nil {
			t.Fatalf("read the stream: %v", err)
		}
		if m.Method == "notifications/progress" {
			return
		}
	}
}

// waitStdoutFull waits until the server's stdout pipe is full: what it
// holds is most of the pipe and has not grown for half a second (the
// call's progress comes ten times a second), so the server's write blocks.
func (s *rawServer) waitStdoutFull(t *testing.T) {
	t.Helper()
	size, err := unix.FcntlInt(s.out.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	last, same := -1, 0
	for {
		n, err := unix.IoctlGetInt(int(s.out.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n == last && n > size/2 {
			same++
		} else {
			last, same = n, 0
		}
		if same >= 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stdout holds %d of %d bytes after 30s", n, size)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ownerFilter(owner string, more ...string) filters.Args {
	f := filters.NewArgs(filters.Arg("label", backend.LabelOwner+"="+owner))
	for _, m := range more {
		f.Add("label", m)
	}
	return f
}

// ownerLeft counts the containers (helpers included) and volumes of owner.
func ownerLeft(t *testing.T, cli *client.Client, owner string) (containers, volumes int) {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: ownerFilter(owner)})
	if err != nil {
		t.Fatal(err)
	}
	vols, err := cli.VolumeList(context.Background(), volume.ListOptions{Filters: ownerFilter(owner)})
	if err != nil {
		t.Fatal(err)
	}
	return len(list), len(vols.Volumes)
}

// waitOwnerGone waits until nothing of owner is left.
func waitOwnerGone(t *testing.T, cli *client.Client, owner string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c, v := ownerLeft(t, cli, owner)
		if c == 0 && v == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d containers and %d volumes of the ended server left after %v", c, v, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeOwner removes what a failed test left of its own server.
func removeOwner(cli *client.Client, owner string) {
	ctx := context.Background()
	if list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: ownerFilter(owner)}); err == nil {
		for _, c := range list {
			cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		}
	}
	if vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: ownerFilter(owner)}); err == nil {
		for _, v := range vols.Volumes {
			cli.VolumeRemove(ctx, v.Name, true)
		}
	}
}

// waitWatchdogReport waits until the server log of the state directory in
// env holds the watchdog's report that it removed sandboxes of owner.
func waitWatchdogReport(t *testing.T, env []string, owner string) {
	t.Helper()
	p := filepath.Join(envValue(env, "MCP_SANDBOX_STATE_DIR"), "logs", "server.log")
	deadline := time.Now().Add(goneWithin)
	for {
		b, _ := os.ReadFile(p)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "removed what a server that is gone left") && strings.Contains(line, "owner="+owner) && strings.Contains(line, "by=watchdog") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watchdog did not report removing the sandboxes of %s:\n%s", owner, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLeakedClosed waits until the pipe the server inherited reads EOF:
// neither the server nor its watchdog holds it.
func (s *rawServer) waitLeakedClosed(t *testing.T) {
	t.Helper()
	s.leaked.SetReadDeadline(time.Now().Add(goneWithin))
	if _, err := s.leaked.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the pipe the server inherited is still held after it ended: %v", err)
	}
}

// replaceWatchdog kills the server's watchdog and waits until the server
// has started another.
func (s *rawServer) replaceWatchdog(t *testing.T) {
	t.Helper()
	pids := watchdogPIDs(s.stderr.String())
	if len(pids) != 1 {
		t.Fatalf("watchdogs started: %v, want one", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(goneWithin)
	for len(watchdogPIDs(s.stderr.String())) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the server started no new watchdog:\n%s", s.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// watchdogPIDs returns the watchdogs a server's log says it started.
func watchdogPIDs(stderr string) []int {
	var pids []int
	for _, m := range watchdogPIDRe.FindAllStringSubmatch(stderr, -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	return pids
}

// checkWatchdogFDs checks that the watchdog holds none of its server's
// stdio nor the pipe the server inherited: it outlives the server, and a
// client waits for EOF on those.
func (s *rawServer) checkWatchdogFDs(t *testing.T) {
	t.Helper()
	pids := watchdogPIDs(s.stderr.String())
	if len(pids) == 0 {
		t.Fatalf("the server logged no watchdog_pid:\n%s", s.stderr.String())
	}
	held := map[string]bool{}
	dir := "/proc/" + strconv.Itoa(pids[len(pids)-1]) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil {
			held[target] = true
		}
	}
	for name, f := range map[string]*os.File{"stdin": s.in, "stdout": s.out, "the inherited pipe": s.leaked} {
		target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
		if err != nil {
			t.Fatal(err)
		}
		if held[target] {
			t.Errorf("the watchdog holds the server's %s (%s)", name, target)
		}
	}
}
