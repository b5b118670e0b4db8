package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// seqBytes is the size of seq 1 n's output.
func seqBytes(n int) int64 {
	var total int64
	for i := 1; i <= n; i++ {
		total += int64(len(fmt.Sprint(i)) + 1)
	}
	return total
}

// A call's output is returned cut to limits.output_bytes for both streams
// together, with one line saying how much was left out and where the whole
// is; the whole is in the sandbox at output_file, up to
// limits.output_file_bytes.
func TestFakeOutputFileKeepsTheWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, nil)
		ctx := context.Background()
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "seq 1 20000; seq 1 20000 >&2"})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Stdout) + len(res.Stderr); !res.Truncated || n > 16<<10+400 {
			t.Errorf("returned %d bytes of output (truncated %v); want at most 16 KiB and a note", n, res.Truncated)
		}
		if res.OutputFile == "" || !strings.HasPrefix(res.OutputFile, "/tmp/") {
			t.Fatalf("output_file = %q, want a path in /tmp", res.OutputFile)
		}
		for _, s := range []string{res.Stdout, res.Stderr} {
			if strings.Count(s, "\n[... ") != 1 || !strings.Contains(s, "all of it is in "+res.OutputFile) {
				t.Errorf("the note does not name the file once:\n%s", s)
			}
		}
		rf, err := be.StatPath(ctx, sb.ContainerID, res.OutputFile)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 * seqBytes(20000); rf.Size != want {
			t.Errorf("output file holds %d bytes, want %d (both streams whole)", rf.Size, want)
		}

		small, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "seq 1 100"})
		if err != nil || small.Truncated || small.OutputFile != "" {
			t.Errorf("short output: output_file %q, truncated %v, err %v; want neither", small.OutputFile, small.Truncated, err)
		}
	})
}

// The file holds at most limits.output_file_bytes, and the note says so.
func TestFakeOutputFileBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Limits.OutputFileBytes = 50000 })
		ctx := context.Background()
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "seq 1 200000"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Stdout, "its first 50000 bytes are in "+res.OutputFile) {
			t.Errorf("the note does not say the file was cut:\n%s", res.Stdout[8<<10:])
		}
		rf, err := be.StatPath(ctx, sb.ContainerID, res.OutputFile)
		if err != nil || rf.Size != 50000 {
			t.Errorf("output file holds %d bytes (err %v), want 50000", rf.Size, err)
		}
	})
}

// A one-shot run_code's sandbox is removed after the call: no file names
// a path that is gone.
func TestFakeOneShotHasNoOutputFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, _ := fakeEngine(t, nil, nil)
		res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Language: "bash", Code: "seq 1 20000"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.OutputFile != "" || !strings.Contains(res.Stdout, "the first and last parts are shown") {
			t.Errorf("one-shot: truncated %v, output_file %q; want cut, no file, the head/tail note", res.Truncated, res.OutputFile)
		}
	})
}
