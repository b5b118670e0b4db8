package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
)

// checkOutputFile checks that res was cut to 16 KiB (and a note) and that
// its output_file holds the whole of seq 1 200000, read back in the
// sandbox.
func checkOutputFile(t *testing.T, eng *sandbox.Engine, id, what string, res sandbox.ExecResult) {
	t.Helper()
	if n := len(res.Stdout) + len(res.Stderr); !res.Truncated || n > 16<<10+300 || res.OutputFile == "" {
		t.Fatalf("%s: %d bytes returned, truncated %v, output_file %q; want at most 16 KiB, cut, a file", what, n, res.Truncated, res.OutputFile)
	}
	if !strings.Contains(res.Stdout, "all of it is in "+res.OutputFile) {
		t.Errorf("%s: the note does not name the file:\n%s", what, res.Stdout[8<<10-100:8<<10+300])
	}
	got := mustExec(t, eng, id, "wc -l < "+res.OutputFile+"; sed -n 123457p "+res.OutputFile+"; wc -c < "+res.OutputFile)
	if got.Stdout != "200000\n123457\n1288895\n" {
		t.Errorf("%s: the output file %s holds %q (lines, line 123457, bytes); want the whole output", what, res.OutputFile, got.Stdout)
	}
}

// A large output is returned cut, and its whole is in the sandbox at
// output_file: through the agent, through docker exec, and from run_code
// in a sandbox (the resident interpreter, and bash's exec).
func TestOutputFileHoldsTheWhole(t *testing.T) {
	ctx := context.Background()
	t.Run("agent", func(t *testing.T) {
		eng, _ := newEngine(t, nil)
		sb := mustCreate(t, eng, sandbox.CreateRequest{})
		checkOutputFile(t, eng, sb.ID, "exec", mustExec(t, eng, sb.ID, "seq 1 200000"))
		if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecAgent {
			t.Errorf("exec path = %q (%s), want the agent", p, why)
		}
		rr, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "for i in range(1, 200001): print(i)"})
		if err != nil {
			t.Fatal(err)
		}
		checkOutputFile(t, eng, sb.ID, "run_code python", rr.ExecResult)
		rr, err = eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: sb.ID, Language: "bash", Code: "seq 1 200000"})
		if err != nil {
			t.Fatal(err)
		}
		checkOutputFile(t, eng, sb.ID, "run_code bash", rr.ExecResult)
		// The oldest file goes: a sandbox keeps the last three.
		mustExec(t, eng, sb.ID, "seq 1 200000")
		// (A glob, not ls: ls fails with EINVAL on statx under some gVisor releases.)
		if got := mustExec(t, eng, sb.ID, "echo /tmp/.mcp-output/*"); got.Stdout != "/tmp/.mcp-output/2.log /tmp/.mcp-output/3.log /tmp/.mcp-output/4.log\n" {
			t.Errorf("output files kept: %q, want the last three (%+v)", got.Stdout, got)
		}
	})
	t.Run("docker exec", func(t *testing.T) {
		eng, _ := newEngineWith(t, engineOptions{wrap: func(be *docker.Backend) backend.Backend { return foreignArch{be} }})
		sb := mustCreate(t, eng, sandbox.CreateRequest{})
		checkOutputFile(t, eng, sb.ID, "exec", mustExec(t, eng, sb.ID, "seq 1 200000"))
		if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker {
			t.Errorf("exec path = %q (%s), want docker exec", p, why)
		}
	})
}

// The sandbox's code owns its output files: one it replaced with a
// symlink, a directory or a FIFO costs the call its file (the note says the head and tail are shown) and
// nothing else; the server never reads the file.
func TestOutputFileHostile(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	mustExec(t, eng, sb.ID, "mkdir -p /tmp/.mcp-output && ln -s /etc/passwd /tmp/.mcp-output/1.log && mkdir /tmp/.mcp-output/2.log")
	// Files are numbered as they are made: the next two calls that cut
	// their output get 1.log and 2.log.
	res := mustExec(t, eng, sb.ID, "seq 1 200000")
	if res.OutputFile != "" || !strings.Contains(res.Stdout, "the first and last parts are shown") {
		t.Errorf("a file the sandbox user cannot write: output_file %q", res.OutputFile)
	}
	res = mustExec(t, eng, sb.ID, "seq 1 200000")
	if res.OutputFile != "" {
		t.Errorf("a directory in the file's place: output_file %q", res.OutputFile)
	}
	// A FIFO nobody reads stalls the writer: it is given up on and
	// killed, and the call returns.
	res = mustExec(t, eng, sb.ID, "mkfifo /tmp/.mcp-output/3.log; seq 1 200000")
	if res.OutputFile != "" || res.ExitCode != 0 || !strings.HasSuffix(res.Stdout, "200000\n") {
		t.Errorf("a FIFO in the file's place: output_file %q, exit %d", res.OutputFile, res.ExitCode)
	}
	if got := mustExec(t, eng, sb.ID, `for d in /proc/[0-9]*; do tr '\0' ' ' < $d/cmdline 2>/dev/null; echo; done`); strings.Contains(got.Stdout, "cat") {
		t.Errorf("the stalled writer still runs:\n%s", got.Stdout)
	}
	checkOutputFile(t, eng, sb.ID, "after", mustExec(t, eng, sb.ID, "rm -rf /tmp/.mcp-output; seq 1 200000"))
}
