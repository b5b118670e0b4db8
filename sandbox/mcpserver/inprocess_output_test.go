package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResultBytes bounds a 200,000-line command's whole result.
const maxResultBytes = 24 << 10

// checkAffordable checks a result a model can afford: at most
// maxResultBytes in all, the output in the text only, and output_file
// named in structuredContent and in the text. It returns output_file.
func checkAffordable(t *testing.T, what string, res *mcp.CallToolResult) string {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: the whole result is %d bytes", what, len(raw))
	if res.IsError || len(raw) > maxResultBytes {
		t.Errorf("%s: the result is %d bytes (isError %v), want at most %d", what, len(raw), res.IsError, maxResultBytes)
	}
	fields, _ := res.StructuredContent.(map[string]any)
	for _, k := range []string{"stdout", "stderr", "result"} {
		if v, ok := fields[k]; ok {
			t.Errorf("%s: structuredContent repeats the output as %s (%d bytes)", what, k, len(v.(string)))
		}
	}
	file, _ := fields["output_file"].(string)
	if file == "" || fields["truncated"] != true {
		t.Errorf("%s: structuredContent %v has no output_file or is not truncated", what, fields)
	}
	txt := text(res)
	if !strings.Contains(txt, "all of it is in "+file) || !strings.Contains(txt, "\n1\n2\n") || !strings.Contains(txt, "\n199999\n200000") {
		t.Errorf("%s: the text lacks the head, the tail or the line naming %s:\n%s", what, file, txt[len(txt)/2-200:len(txt)/2+200]+"…"+txt[len(txt)-200:])
	}
	return file
}

// TestInProcOutputOnceAndAffordable: sandbox_exec and run_code in a
// sandbox return a 200,000-line output within 24 KB, once (text), with
// output_file naming where the whole is; a one-shot run_code names no
// file; a short output has none either.
func TestInProcOutputOnceAndAffordable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startInProc(t, nil)
		id := p.create(t, map[string]any{"language": "bash"})
		file := checkAffordable(t, "sandbox_exec", p.call(t, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "seq 1 200000"}))
		c, err := p.be.StatPath(t.Context(), containerOf(t, p, id), file)
		if err != nil || c.Size != 1288895 {
			t.Errorf("output file %s: %d bytes (%v), want the whole 1288895", file, c.Size, err)
		}
		checkAffordable(t, "run_code", p.call(t, "run_code", map[string]any{"sandbox_id": id, "language": "bash", "code": "seq 1 200000"}))

		res := p.call(t, "run_code", map[string]any{"language": "bash", "code": "seq 1 200000"})
		if fields, _ := res.StructuredContent.(map[string]any); res.IsError || fields["output_file"] != nil || fields["stdout"] != nil {
			t.Errorf("one-shot run_code: %v; want no output_file (its sandbox is gone) and no stdout", fields)
		}
		res = p.call(t, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo hi"})
		if fields, _ := res.StructuredContent.(map[string]any); fields["output_file"] != nil || fields["stdout"] != nil || !strings.Contains(text(res), "--- stdout\nhi\n") {
			t.Errorf("short output: %v, %q; want hi in the text only", fields, text(res))
		}
	})
}

// containerOf is the container of sandbox id.
func containerOf(t *testing.T, p *inproc, id string) string {
	t.Helper()
	for _, c := range p.be.Containers() {
		if strings.HasSuffix(c.Name, id) {
			return c.ID
		}
	}
	t.Fatalf("no container for %s", id)
	return ""
}
