package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// outputSchemas returns each tool's outputSchema, resolved for validation.
func (p *inproc) outputSchemas(t *testing.T) map[string]*jsonschema.Resolved {
	t.Helper()
	list, err := p.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = resolveSchema(t, tool.Name, raw)
	}
	return out
}

// TestInProcEveryToolValid calls every tool with valid arguments and
// checks the result is not an error, says what happened, and that its
// structuredContent validates against the tool's outputSchema.
func TestInProcEveryToolValid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		schemas := p.outputSchemas(t)
		if err := os.WriteFile(filepath.Join(p.host, "in.txt"), []byte("from the host"), 0o600); err != nil {
			t.Fatal(err)
		}
		id := p.create(t, map[string]any{"language": "bash", "memory_mb": 256, "cpus": 0.5, "pids": 64, "ttl_minutes": 5, "env": map[string]any{"A": "1"}, "network": "none"})
		called := map[string]bool{"sandbox_create": true}
		for _, c := range []struct {
			tool string
			args map[string]any
			want string // in the text content
		}{
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo $A $B; cat; pwd; exit 3", "env": map[string]any{"B": "2"}, "stdin": "in", "workdir": "sub", "timeout_seconds": 5}, "exit_code: 3"},
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo hi"}, "hi"},
			{"run_code", map[string]any{"sandbox_id": id, "code": "echo kept", "language": "bash", "reset": true, "timeout_seconds": 5}, "kept"},
			{"run_code", map[string]any{"code": "echo fresh", "language": "bash"}, "fresh"},
			{"write_file", map[string]any{"sandbox_id": id, "path": "a.txt", "content": "hello"}, "Wrote 5 bytes"},
			{"write_file", map[string]any{"sandbox_id": id, "path": "a.txt", "content": "IQ==", "encoding": "base64", "append": true}, "Wrote 6 bytes"},
			{"read_file", map[string]any{"sandbox_id": id, "path": "a.txt"}, "hello!"},
			{"read_file", map[string]any{"sandbox_id": id, "path": "/workspace/a.txt", "offset": 1, "max_bytes": 2, "encoding": "base64"}, "pass offset 3"},
			{"list_files", map[string]any{"sandbox_id": id, "path": ".", "recursive": true}, "/workspace/a.txt"},
			{"copy_in", map[string]any{"sandbox_id": id, "host_path": filepath.Join(p.host, "in.txt"), "dest_path": "/workspace/in.txt", "include_ignored": true}, "Copied 1 files"},
			{"copy_out", map[string]any{"sandbox_id": id, "path": "a.txt", "host_path": "out.txt", "overwrite": true}, "Copied 1 files"},
			{"propose_changes", map[string]any{"sandbox_id": id, "path": "a.txt", "host_path": filepath.Join(p.host, "prop.txt")}, "Waiting for the person"},
			{"sandbox_list", map[string]any{}, id},
			{"sandbox_expose", map[string]any{"sandbox_id": id, "port": 8000, "close": true}, "was not exposed"},
			{"sandbox_stop", map[string]any{"sandbox_id": id}, "Stopped " + id},
			{"sandbox_stop", map[string]any{"all": true}, ""},
		} {
			called[c.tool] = true
			res := p.call(t, c.tool, c.args)
			got := text(res)
			// p.call checked the structured content against the schema.
			if res.IsError || !strings.Contains(got, c.want) {
				t.Errorf("%s %v: %q (isError %v), want %q", c.tool, c.args, got, res.IsError, c.want)
			}
		}
		// The fake cannot run an install helper's agent: install_packages
		// is covered as a refusal in TestInProcInvalidArguments.
		called["install_packages"] = true
		for name := range schemas {
			if !called[name] {
				t.Errorf("tool %s not covered", name)
			}
		}
		if b, err := os.ReadFile(filepath.Join(p.host, "out.txt")); err != nil || string(b) != "hello!" {
			t.Errorf("copy_out wrote %q, %v", b, err)
		}
	})
}

// jsonValue is v as encoding/json decodes it (what a client sees).
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInProcInvalidArguments: arguments of the wrong type, missing,
// unknown or out of range, and requests the engine refuses, are each an
// isError result that names the argument and says what to do; none is a
// protocol error and none leaves a container behind (allowlist without
// an agent is refused only after the backend made the container, which is
// then removed in the background).
func TestInProcInvalidArguments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		for _, c := range []struct {
			tool string
			args map[string]any
			want []string // all in the error text
		}{
			{"run_code", map[string]any{"code": 5}, []string{"code", "string", "number"}},
			{"run_code", map[string]any{}, []string{"code"}},
			{"run_code", map[string]any{"code": "x", "reset": "yes"}, []string{"reset", "boolean"}},
			{"run_code", map[string]any{"code": "x", "timeout_seconds": 0}, []string{"timeout_seconds", "1"}},
			{"run_code", map[string]any{"code": "x", "timeout_seconds": 1.5}, []string{"timeout_seconds", "integer"}},
			{"run_code", map[string]any{"code": "x", "language": "cobol"}, []string{"cobol", "python"}},
			{"run_code", map[string]any{"code": "x", "sandbox_id": "nope"}, []string{"nope", "sandbox_create"}},
			{"run_code", map[string]any{"code": "x", "colour": "red"}, []string{"colour"}},
			{"sandbox_create", map[string]any{"network": "internet"}, []string{"network", "none", "allowlist", "egress"}},
			{"sandbox_create", map[string]any{"network": "allowlist"}, []string{"allowlist networking needs the sandbox's command agent"}},
			{"sandbox_create", map[string]any{"network": "allowlist", "allow_domains": "pypi.org"}, []string{"allow_domains must be an array"}},
			{"sandbox_create", map[string]any{"network": "allowlist", "allow_domains": []any{"https://pypi.org"}}, []string{"allow_domains", "write only the host"}},
			{"sandbox_create", map[string]any{"network": "allowlist", "allow_domains": []any{"pypi.org"}}, []string{"pypi.org is not in network.allow_domains", "only a person can allow a host"}},
			{"sandbox_create", map[string]any{"allow_domains": []any{"pypi.org"}}, []string{`allow_domains is only for network "allowlist"`}},
			{"sandbox_create", map[string]any{"memory_mb": 8}, []string{"memory_mb", "16"}},
			{"sandbox_create", map[string]any{"cpus": "two"}, []string{"cpus", "number", "string"}},
			{"sandbox_create", map[string]any{"env": map[string]any{"A": 1}}, []string{"env", "string"}},
			{"sandbox_create", map[string]any{"image": "evil/image:1"}, []string{"evil/image:1"}},
			{"sandbox_exec", map[string]any{"sandbox_id": id}, []string{"command"}},
			{"sandbox_exec", map[string]any{"command": "true"}, []string{"sandbox_id"}},
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "true", "workdir": "../../etc"}, []string{"workspace"}},
			{"write_file", map[string]any{"sandbox_id": id, "path": "a", "content": "!", "encoding": "base64"}, []string{"base64"}},
			{"write_file", map[string]any{"sandbox_id": id, "path": "a", "content": "x", "encoding": "latin-1"}, []string{"encoding", "utf-8", "base64"}},
			{"write_file", map[string]any{"sandbox_id": id, "path": "/etc/passwd", "content": "x"}, []string{"/workspace"}},
			{"read_file", map[string]any{"sandbox_id": id, "path": "missing.txt"}, []string{"missing.txt"}},
			{"read_file", map[string]any{"sandbox_id": id, "path": "a", "max_bytes": 0}, []string{"max_bytes", "1"}},
			{"list_files", map[string]any{"sandbox_id": id, "recursive": 1}, []string{"recursive", "boolean"}},
			{"copy_in", map[string]any{"sandbox_id": id, "host_path": "/etc/hostname"}, []string{"read_roots"}},
			{"copy_out", map[string]any{"sandbox_id": id, "path": "a", "host_path": "/etc/x"}, []string{"write_root"}},
			{"install_packages", map[string]any{"sandbox_id": id, "packages": []any{}}, []string{"packages"}},
			{"install_packages", map[string]any{"sandbox_id": id, "packages": "numpy"}, []string{"packages", "array"}},
			{"install_packages", map[string]any{"sandbox_id": id, "packages": []any{"x"}, "manager": "apt"}, []string{"manager", "pip", "npm"}},
			{"sandbox_stop", map[string]any{"sandbox_id": "nope"}, []string{"nope"}},
			// Moved from TestGoSDKClient on the built binary: the
			// engine's refusals, with the setting to change.
			{"sandbox_exec", map[string]any{"sandbox_id": "nosuchbox1", "command": "ls"}, []string{"sandbox_list"}},
			{"sandbox_create", map[string]any{"memory_mb": 99999}, []string{"limits.memory_mb"}},
			{"sandbox_create", map[string]any{"network": "egress"}, []string{"allow_egress"}},
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": ""}, []string{"command is empty"}},
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": strings.Repeat("x", 2<<20)}, []string{"more than"}},
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "ls", "timeout_seconds": 99999}, []string{"max_exec_timeout_seconds"}},
			{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "ls", "privileged": true}, []string{"privileged"}},
			{"sandbox_stop", map[string]any{}, []string{"sandbox_id"}},
			{"sandbox_expose", map[string]any{"sandbox_id": id, "port": 0}, []string{"port", "1"}},
			{"sandbox_expose", map[string]any{"sandbox_id": id, "port": 65536}, []string{"port", "65535"}},
			{"sandbox_expose", map[string]any{"sandbox_id": id}, []string{"port"}},
			{"sandbox_expose", map[string]any{"sandbox_id": "nope", "port": 80}, []string{"nope"}},
			// The fake backend's sandboxes cannot run the agent: no
			// preview, and no network instead.
			{"sandbox_expose", map[string]any{"sandbox_id": id, "port": 8000}, []string{"command agent", "no network"}},
			// Nor its install helper, whose only network is a proxy on
			// that agent: the install is refused, never given a network.
			{"install_packages", map[string]any{"sandbox_id": id, "packages": []any{"x"}, "manager": "pip"}, []string{"command agent inside the install helper"}},
		} {
			synctest.Wait() // a refused create's removal ends first
			before := len(p.be.Containers())
			res := p.call(t, c.tool, c.args)
			got := text(res)
			if !res.IsError {
				t.Errorf("%s %v: not an error: %q", c.tool, c.args, got)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s %v: error %q does not mention %q", c.tool, c.args, got, w)
				}
			}
			if strings.Contains(got, "&{") || strings.Contains(got, "Got:") {
				t.Errorf("%s %v: error %q shows Go internals", c.tool, c.args, got)
			}
			synctest.Wait()
			if n := len(p.be.Containers()); n != before {
				t.Errorf("%s %v: %d containers left after a refused call, %d before", c.tool, c.args, n, before)
			}
		}
	})
}

// TestInProcProgressBeforeResult: every progress notification of a call
// is written before its result, and the client receives the output as
// progress while the command runs.
func TestInProcProgressBeforeResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		params := &mcp.CallToolParams{Name: "sandbox_exec", Arguments: map[string]any{
			"sandbox_id": id, "command": "echo one; sleep 3; echo two; sleep 3; echo three",
		}}
		params.SetProgressToken("tok-1")
		res, err := p.cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			t.Fatalf("exec: %v %q", err, text(res))
		}
		var progress, after int
		answered := false
		for _, m := range p.out.messages(t) {
			if m.Method == "notifications/progress" && m.Params.ProgressToken == "tok-1" {
				progress++
				if answered {
					after++
				}
			}
			if m.Result != nil && strings.Contains(string(m.Result), "three") {
				answered = true
			}
		}
		if !answered || progress < 2 || after != 0 {
			t.Errorf("answered %v, %d progress notifications, %d after the result", answered, progress, after)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if all := strings.Join(p.prog, "\n"); !strings.Contains(all, "one") || !strings.Contains(all, "two") {
			t.Errorf("progress messages %q lack the output", p.prog)
		}
	})
}

// TestInProcCancel: notifications/cancelled (the client's context ending)
// ends the call and kills the command in the sandbox: what it would have
// done afterwards never happens, and the sandbox goes on serving.
func TestInProcCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "sandbox_exec", Arguments: map[string]any{
				"sandbox_id": id, "command": "sleep 600; touch /workspace/after",
			}})
			done <- err
		}()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err == nil {
			t.Error("a cancelled call returned no error")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		var cancelled bool
		for _, m := range p.out.messages(t) {
			cancelled = cancelled || m.Result != nil && strings.Contains(string(m.Result), "timed_out")
		}
		if cancelled {
			t.Error("the server answered the cancelled call")
		}
		time.Sleep(20 * time.Minute)
		synctest.Wait()
		res := p.call(t, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "ls /workspace"})
		if res.IsError || strings.Contains(text(res), "after") {
			t.Errorf("after the cancel: %q (isError %v); the command went on", text(res), res.IsError)
		}
		if el := time.Since(start); el > 30*time.Minute {
			t.Errorf("bubble time %v", el)
		}
	})
}

// TestInProcAudit: each tool call leaves one audit entry with the client,
// the tool, the sandbox, a summary, the exit code and whether it failed.
func TestInProcAudit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash", "env": map[string]any{"TOKEN": "secret-value"}})
		p.call(t, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo out-123; exit 4"})
		p.call(t, "run_code", map[string]any{"code": "echo", "sandbox_id": "gone-sandbox"})
		p.call(t, "read_file", map[string]any{"sandbox_id": id, "path": 7})
		entries, err := p.st.ReadAudit(10)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 4 {
			t.Fatalf("%d audit entries, want 4: %+v", len(entries), entries)
		}
		byTool := map[string]int{}
		for i, e := range entries {
			byTool[e.Tool] = i
			if e.Client != "inproc-test" {
				t.Errorf("entry %+v: client %q", e, e.Client)
			}
			if strings.Contains(e.Summary, "secret-value") {
				t.Errorf("entry %+v shows an env value", e)
			}
		}
		c, x, r := entries[byTool["sandbox_create"]], entries[byTool["sandbox_exec"]], entries[byTool["run_code"]]
		if c.SandboxID != id || !strings.Contains(c.Summary, "TOKEN=") || c.Error {
			t.Errorf("create entry %+v", c)
		}
		if x.SandboxID != id || x.Summary != "$ echo out-123; exit 4" || x.ExitCode == nil || *x.ExitCode != 4 || x.Error {
			t.Errorf("exec entry %+v", x)
		}
		// The output of a call that ran a command is kept for the
		// window's view of the call; other calls keep none.
		if !strings.Contains(x.Output, "out-123") || c.Output != "" || x.Cancelled {
			t.Errorf("exec output %q, create output %q, cancelled %v", x.Output, c.Output, x.Cancelled)
		}
		if !r.Error || r.SandboxID != "gone-sandbox" || r.Summary != "echo" {
			t.Errorf("run_code entry %+v", r)
		}
		// Arguments the schema refuses are audited too, with the reason.
		if rf := entries[byTool["read_file"]]; !rf.Error || rf.Summary != "invalid arguments: path must be a string (got a number)" {
			t.Errorf("refused read_file entry %+v", rf)
		}
	})
}
