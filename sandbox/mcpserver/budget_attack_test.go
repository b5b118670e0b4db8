package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// Attacks on the server's memory from inside a sandbox, through the real
// binary: every byte a sandbox sends is counted against a budget before
// the server buffers it, so its peak resident memory stays far below
// what the sandbox sends, and each call answers with a clear truncation.

// channel is Python that finds the resident interpreter's frame channel
// (any code in the sandbox can reach it, or write the same frames to the
// interpreter's stdout), so that the frames below are injected as a
// hostile process would.
const channel = "import gc, threading, time\n" +
	"ch = next(o for o in gc.get_objects() if type(o).__name__ == 'Channel')\n" + pngPy

// pngPy is Python for png(n): a PNG's signature and header (a 1×1 grey
// image) and n bytes more, which the server takes for a figure.
const pngPy = "import struct, zlib\n" +
	"def png(n):\n" +
	"    h = struct.pack('>IIBBBBB', 1, 1, 8, 0, 0, 0, 0)\n" +
	"    return b'\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\x0dIHDR' + h + struct.pack('>I', zlib.crc32(b'IHDR' + h)) + b'p' * n\n"

// budgetOut is the part of run_code's result these tests read.
type budgetOut struct {
	execOut
	Result    string `json:"result"`
	StateLost bool   `json:"state_lost"`
}

// images returns how many images a result carries and their bytes.
func images(res *mcp.CallToolResult) (n, bytes int) {
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			n++
			bytes += len(ic.Data)
		}
	}
	return n, bytes
}

// floodCall is timedCall for a call that may answer with more than a
// client takes (as the server did before the fix): the test goes on to
// measure the server, with an empty result.
func floodCall(t *testing.T, sess *mcp.ClientSession, limit time.Duration, name string, args map[string]any) (*mcp.CallToolResult, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := sess.CallTool(testContext(t, limit), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Errorf("%s did not answer: %v", name, err)
		return &mcp.CallToolResult{IsError: true}, time.Since(start)
	}
	return res, time.Since(start)
}

// The sandbox floods the server with figures (16 of 16 MiB, then 200
// small ones), with figures from a background thread while a harmless
// call runs, with frames over the bound (a 48 MiB done frame), and with
// listings of long, deep names (through the agent and through the tar
// the server falls back to). Before the fix the server kept every figure
// up to 64 MiB each, base64- and JSON-encoded them, and kept every name:
// it peaked at gigabytes. Now each call answers with a truncation it
// explains, and the server's peak stays under 150 MB.
func TestAttackFloodServerMemory(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackFloodServerMemory(t, serverEnv)
}

func attackFloodServerMemory(t *testing.T, env backendEnv) {
	p := startServer(t, env(t, "[limits]\nmax_sandboxes = 1000\nexec_timeout_seconds = 60\n"))
	sess := sdkClient(t, p, nil)
	id := createWith(t, sess, map[string]any{"memory_mb": 512})
	const limit = 2 * time.Minute
	peak := func(what string) {
		t.Helper()
		mb := peakRSS(t, p.cmd.Process.Pid)
		t.Logf("server peak RSS after %s: %d MB", what, mb)
		if mb > 150 {
			t.Errorf("the server's peak memory reached %d MB after %s", mb, what)
		}
	}

	// Figures: 16 of 16 MiB (each over limits.image_bytes), then 200 small.
	res, took := floodCall(t, sess, limit, "run_code", map[string]any{"sandbox_id": id, "code": channel +
		"big = png(16 << 20)\n" +
		"for _ in range(16): ch.send('fig', big)\n" +
		"small = png(1000)\n" +
		"for _ in range(200): ch.send('fig', small)\n" +
		"'sent'"})
	peak("the figure flood")
	var got budgetOut
	structured(t, res, &got)
	n, size := images(res)
	t.Logf("figure flood: %d images (%d bytes of base64) after %s: %s", n, size, took.Round(time.Millisecond), clipText(text(res)))
	if res.IsError || got.Result != "'sent'" || !got.Truncated || n != 16 || size > 16*2100 ||
		!strings.Contains(text(res), "200 figure(s)") || !strings.Contains(text(res), "limits.image_bytes") {
		t.Errorf("want the 16 small figures, truncated, and a note on the 200 dropped; got %d images, %+v: %s", n, got, clipText(text(res)))
	}

	// A background thread floods figures between and during calls; the
	// next, harmless call is not the worse for it.
	mustOK(t, call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": channel +
		"def flood():\n    big = b'p' * (16 << 20)\n    for _ in range(12):\n        ch.send('fig', big)\n        time.sleep(0.25)\n" +
		"threading.Thread(target=flood, daemon=True).start()"}), "run_code")
	res, _ = floodCall(t, sess, limit, "run_code", map[string]any{"sandbox_id": id, "code": "time.sleep(2)\n1 + 1"})
	peak("the background flood")
	got = budgetOut{}
	structured(t, res, &got)
	n, _ = images(res)
	t.Logf("call during a background flood: %d images: %s", n, clipText(text(res)))
	if res.IsError || got.Result != "2" || n != 0 || !got.Truncated || !strings.Contains(text(res), "were not returned") {
		t.Errorf("want result 2, no images and a truncation note; got %d images, %+v: %s", n, got, clipText(text(res)))
	}

	// A frame over the bound ends the interpreter; the call says so.
	res, _ = floodCall(t, sess, limit, "run_code", map[string]any{"sandbox_id": id, "code": channel +
		"ch.send('done', b'{\"id\": 0, \"exit_code\": 0, \"result\": \"' + b'x' * (48 << 20) + b'\"}')\n'after'"})
	peak("an oversized frame")
	got = budgetOut{}
	structured(t, res, &got)
	t.Logf("an oversized frame: %s", clipText(text(res)))
	if !got.StateLost || !strings.Contains(text(res), "stopped answering properly") {
		t.Errorf("an oversized frame was taken: %+v: %s", got, clipText(text(res)))
	}

	// Long names: 4000 files of 250 characters at the end of 80
	// directories of 250 (paths of 20 KB each, 80 MB in all).
	mustOK(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "timeout_seconds": 120, "command": `python3 -c '
import os
os.mkdir("/workspace/long"); os.chdir("/workspace/long")
for i in range(80):
    os.mkdir("d" * 250); os.chdir("d" * 250)
for i in range(4000):
    open("f%04d" % i + "x" * 240, "w").close()
'`}), "making long names")
	listLong := func(path string) {
		t.Helper()
		res, took := floodCall(t, sess, limit, "list_files", map[string]any{"sandbox_id": id, "path": "long", "recursive": true})
		peak("list_files of long names (" + path + ")")
		var l struct {
			Entries   []struct{ Path string } `json:"entries"`
			Truncated bool                    `json:"truncated"`
		}
		structured(t, res, &l)
		names := 0
		for _, e := range l.Entries {
			names += len(e.Path)
		}
		t.Logf("list_files (%s): %d entries, %d bytes of names, truncated %v, after %s", path, len(l.Entries), names, l.Truncated, took.Round(time.Millisecond))
		// Through the agent the listing stops where the agent does (it
		// sends at most 8 MiB); through tar the server counts the names.
		if !res.IsError && (names > 3<<20 || path == "tar" && !l.Truncated) {
			t.Errorf("list_files (%s) kept %d bytes of names, truncated %v", path, names, l.Truncated)
		}
	}
	listLong("agent")
	// The sandbox kills its command agent three times: from then on the
	// server runs commands, and the file tools' tar, through the engine.
	for i := 0; i < 3; i++ {
		res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "kill -KILL $PPID; sleep 5"})
		if !res.IsError {
			t.Fatalf("killing the agent did not end the command: %s", text(res))
		}
	}
	listLong("tar")
	var list struct {
		Sandboxes []struct {
			Exec string `json:"exec"`
		} `json:"sandboxes"`
	}
	structured(t, call(t, sess, "sandbox_list", nil), &list)
	if len(list.Sandboxes) != 1 || list.Sandboxes[0].Exec != "docker exec" {
		t.Errorf("the listing did not go through tar: the sandbox's exec path is %+v", list.Sandboxes)
	}
}
