package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// Code in the sandbox sends a forged 4 MB "figure" of random bytes and a
// PNG header with a wrong checksum beside a real PNG header: only the
// real one comes back as an image, and the result says what was dropped.
// Before the check every one was attached as a PNG.
func TestAttackForgedFigure(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, "[limits]\nimage_bytes = 16777216\n"))
	sess := sdkClient(t, p, nil)
	id := createWith(t, sess, nil)
	res := call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": channel + "import os\n" +
		"ch.send('fig', os.urandom(4 << 20))\n" +
		"bad = bytearray(png(100)); bad[20] ^= 1\n" +
		"ch.send('fig', bytes(bad))\n" +
		"ch.send('fig', png(100))\n" +
		"'sent'"})
	var got budgetOut
	structured(t, res, &got)
	n, _ := images(res)
	if res.IsError || got.Result != "'sent'" || n != 1 || !strings.Contains(text(res), "2 figure(s) were not PNG images") {
		t.Errorf("want the one real figure and a note on the 2 forged; got %d images: %s", n, clipText(text(res)))
	}
}
