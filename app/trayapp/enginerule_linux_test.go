package trayapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// TestExplicitDeadEngine: with DOCKER_HOST naming a dead socket while the
// machine's own engine answers at the default socket, the real server, the
// real CLI and the tray's engine connection all refuse with an error that
// names DOCKER_HOST and what to do, and not one managed container of
// theirs appears on the default engine: an explicit choice is used or
// nothing is. Run alone: go test -race -run TestExplicitDeadEngine ./app/trayapp
func TestExplicitDeadEngine(t *testing.T) {
	engine := apptest.Docker(t, apptest.PythonImage) // what a fallback would reach
	defer engine.Close()
	server := apptest.Binary(t, "mcp-sandbox")
	dir := t.TempDir()
	dead := "unix://" + filepath.Join(dir, "dead.sock")
	home := filepath.Join(dir, "home")
	if err := apptest.WriteHome(home, ""); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "DOCKER_HOST": dead}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	names := "DOCKER_HOST=" + dead + " (from the environment)"
	todo := "unset DOCKER_HOST to let MCP Sandbox detect one"

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	creates := watchManagedCreates(ctx, t, engine)
	var pids []int

	t.Run("server", func(t *testing.T) {
		client := "engine-rule-test-" + randomHex(t)
		creates.client = client
		cmd := exec.Command(server, "serve")
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil)
		sess, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		pids = append(pids, cmd.Process.Pid)
		defer func() {
			sess.Close()
			if t.Failed() {
				t.Logf("server stderr:\n%s", stderr.String())
			}
		}()
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"sandbox_create", map[string]any{"language": "python"}},
			{"run_code", map[string]any{"code": "print(1)"}},
		} {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
			if err != nil {
				t.Fatalf("%s: %v", call.tool, err)
			}
			msg := resultText(res)
			t.Logf("%s: %s", call.tool, msg)
			if !res.IsError || !strings.Contains(msg, names) || !strings.Contains(msg, todo) {
				t.Errorf("%s: isError=%v %q, want an error naming %s and saying %q", call.tool, res.IsError, msg, names, todo)
			}
		}
	})

	t.Run("cli", func(t *testing.T) {
		run := func(stdin string, args ...string) (int, string, string) {
			cmd := exec.Command(server, args...)
			cmd.Env = env
			cmd.Stdin = strings.NewReader(stdin)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			if cmd.ProcessState == nil {
				t.Fatalf("%v: %v", args, err)
			}
			pids = append(pids, cmd.ProcessState.Pid())
			return cmd.ProcessState.ExitCode(), out.String(), errb.String()
		}

		code, out, errOut := run("", "doctor", "--json")
		var r struct {
			Docker struct {
				Chosen     *json.RawMessage `json:"chosen"`
				Candidates []struct {
					Host   string `json:"host"`
					Source string `json:"source"`
					OK     bool   `json:"ok"`
					Error  string `json:"error"`
				} `json:"candidates"`
				Hint string `json:"hint"`
			} `json:"docker"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("doctor --json: not one JSON object: %v\n%s%s", err, out, errOut)
		}
		if code == 0 || r.Docker.Chosen != nil {
			t.Errorf("doctor --json: exit %d, docker.chosen %s; want non-zero and null", code, out)
		}
		if cs := r.Docker.Candidates; len(cs) == 0 || cs[0].Host != dead || cs[0].Source != "DOCKER_HOST" || cs[0].OK || cs[0].Error == "" {
			t.Errorf("doctor --json: candidates %+v, want DOCKER_HOST %s first, ok=false, with its error", cs, dead)
		}
		if !strings.Contains(r.Docker.Hint, names) || !strings.Contains(r.Docker.Hint, todo) {
			t.Errorf("doctor --json: hint %q, want it to name %s and say %q", r.Docker.Hint, names, todo)
		}

		for _, args := range [][]string{{"ps"}, {"stop", "--all"}, {"run", "--lang", "python", "-"}} {
			code, out, errOut := run("print(1)\n", args...)
			t.Logf("%s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(errOut))
			if code == 0 || !strings.Contains(errOut, names) || !strings.Contains(errOut, todo) {
				t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s\nwant non-zero and an error naming %s", strings.Join(args, " "), code, out, errOut, names)
			}
		}
	})

	t.Run("tray", func(t *testing.T) {
		opts := dockerhost.Options{Getenv: func(k string) string { return vars[k] }}
		cli, be, res, err := engineconn.Dial(ctx, opts, nil)
		if cli != nil {
			cli.Close()
		}
		if !errors.Is(err, dockerhost.ErrExplicitUnreachable) || be != nil || res.Chosen != nil {
			t.Fatalf("dialEngine: err %v, backend %v, chosen %+v; want ErrExplicitUnreachable and nothing chosen", err, be, res.Chosen)
		}
		if !strings.Contains(err.Error(), names) || !strings.Contains(err.Error(), todo) {
			t.Errorf("dialEngine: %q, want it to name %s and say %q", err, names, todo)
		}
	})

	for _, m := range creates.stop(ctx, t) {
		pid, _ := strconv.Atoi(m.Actor.Attributes["io.mcp-sandbox.owner-pid"])
		if slices.Contains(pids, pid) || m.Actor.Attributes["io.mcp-sandbox.client"] == creates.client {
			t.Errorf("container %s (%s) was created on the default engine with DOCKER_HOST dead: labels %v", m.Actor.Attributes["name"], m.Actor.ID, m.Actor.Attributes)
		}
	}
}

// managedCreates records the managed containers created on an engine from
// the moment it is started: a live event stream, and at the end the
// engine's own record of the same span (the stream may lag behind the last
// calls), so that even a container created and removed at once (run_code
// without a sandbox) is seen.
type managedCreates struct {
	cli    *client.Client
	since  string
	filter filters.Args
	client string // the MCP client name whose sandboxes count

	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	seen   map[string]events.Message
	err    error
}

func watchManagedCreates(ctx context.Context, t *testing.T, cli *client.Client) *managedCreates {
	t.Helper()
	w := &managedCreates{
		cli:    cli,
		since:  strconv.FormatInt(time.Now().Add(-time.Second).Unix(), 10),
		filter: filters.NewArgs(filters.Arg("type", "container"), filters.Arg("event", "create"), filters.Arg("label", "io.mcp-sandbox.managed=true")),
		done:   make(chan struct{}),
		seen:   map[string]events.Message{},
	}
	sctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	msgs, errs := cli.Events(sctx, events.ListOptions{Since: w.since, Filters: w.filter})
	go func() {
		defer close(w.done)
		for {
			select {
			case m := <-msgs:
				w.add(m)
			case err := <-errs:
				if sctx.Err() == nil {
					w.mu.Lock()
					w.err = err
					w.mu.Unlock()
				}
				return
			}
		}
	}()
	return w
}

func (w *managedCreates) add(m events.Message) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[m.Actor.ID] = m
}

// stop ends the stream, adds the engine's record up to now, and returns
// every create seen.
func (w *managedCreates) stop(ctx context.Context, t *testing.T) []events.Message {
	t.Helper()
	until := strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10)
	msgs, errs := w.cli.Events(ctx, events.ListOptions{Since: w.since, Until: until, Filters: w.filter})
	for done := false; !done; {
		select {
		case m := <-msgs:
			w.add(m)
		case err := <-errs:
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("docker events: %v", err)
			}
			done = true
		}
	}
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatalf("docker events stream: %v", w.err)
	}
	var out []events.Message
	for _, m := range w.seen {
		out = append(out, m)
	}
	return out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func randomHex(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestTrayEngineComesBack: the tray's engine connection keeps no memory of
// a failure: once the engine at DOCKER_HOST answers (here, a socket that
// forwards to the machine's engine), the next look uses it. Run alone: go
// test -race -run TestTrayEngineComesBack ./app/trayapp
func TestTrayEngineComesBack(t *testing.T) {
	engine := apptest.Docker(t)
	defer engine.Close()
	sock := filepath.Join(t.TempDir(), "later.sock")
	opts := dockerhost.Options{Getenv: func(k string) string {
		if k == "DOCKER_HOST" {
			return "unix://" + sock
		}
		return ""
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, _, _, err := engineconn.Dial(ctx, opts, nil); !errors.Is(err, dockerhost.ErrExplicitUnreachable) {
		t.Fatalf("before the engine answers: %v, want ErrExplicitUnreachable", err)
	}
	apptest.StartEngineProxy(t, engine, sock)
	cli, be, res, err := engineconn.Dial(ctx, opts, nil)
	if err != nil {
		t.Fatalf("once DOCKER_HOST answers: %v", err)
	}
	defer cli.Close()
	if res.Chosen == nil || res.Chosen.Source != "DOCKER_HOST" || be.Host() != "unix://"+sock {
		t.Errorf("chosen %+v, backend at %s; want DOCKER_HOST unix://%s", res.Chosen, be.Host(), sock)
	}
}
