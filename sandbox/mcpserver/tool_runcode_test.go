package mcpserver_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// runCodeOut is run_code's structured result.
type runCodeOut struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Result    string `json:"result"`
	TimedOut  bool   `json:"timed_out"`
	StateLost bool   `json:"state_lost"`
}

// TestRunCodeNotebookOverStdio drives the resident interpreter through the
// real binary: state between calls, a trailing expression's value,
// figures as image content, output streamed as progress before the result,
// and a timeout that restarts the interpreter and says so.
func TestRunCodeNotebookOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PlotImage)
	// A language on the plotting image, served by the Python interpreter.
	p := startServer(t, serverEnv(t, `
[languages.plot]
image = "`+testenv.PlotImage+`"
run = ["python3", "{file}"]
extension = ".py"
runner = "python"
`))
	var mu sync.Mutex
	var progress []string
	sess := sdkClient(t, p, func(pp *mcp.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, pp.Message)
		mu.Unlock()
	})
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, call(t, sess, "sandbox_create", map[string]any{"language": "plot"}), &created)
	id := created.SandboxID

	for _, tc := range []struct {
		code string
		args map[string]any
		want runCodeOut
	}{
		{"x = 41", nil, runCodeOut{}},
		{"print(x + 1)", nil, runCodeOut{Stdout: "42\n"}},
		{"x", nil, runCodeOut{Result: "41"}},
		{"import time\ntime.sleep(30)", map[string]any{"timeout_seconds": 1}, runCodeOut{ExitCode: 124, TimedOut: true, StateLost: true}},
		{"'x' in globals()", nil, runCodeOut{Result: "False"}},
		{"x = 1", map[string]any{"reset": true}, runCodeOut{StateLost: true}},
	} {
		args := map[string]any{"sandbox_id": id, "code": tc.code}
		for k, v := range tc.args {
			args[k] = v
		}
		var got runCodeOut
		res := call(t, sess, "run_code", args)
		structured(t, res, &got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.code, diff)
		}
		if tc.want.StateLost && !strings.Contains(text(res), "earlier variables are gone") {
			t.Errorf("%q: the text does not say the state was lost: %q", tc.code, text(res))
		}
	}

	// A figure comes back as a PNG image block.
	res := call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"})
	var images int
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			images++
			data := img.Data
			if dec, err := base64.StdEncoding.DecodeString(string(img.Data)); err == nil {
				data = dec
			}
			if img.MIMEType != "image/png" || !bytes.HasPrefix(data, []byte("\x89PNG")) {
				t.Errorf("image block %s is not a PNG", img.MIMEType)
			}
		}
	}
	if images != 1 {
		t.Errorf("got %d image blocks, want 1: %+v", images, res.Content)
	}

	// Output streams as progress while the code runs.
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"sandbox_id": id, "code": "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')",
	}}
	params.SetProgressToken("tok-stream")
	start := time.Now()
	var sawFirstAt time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			mu.Lock()
			joined := strings.Join(progress, "")
			mu.Unlock()
			if strings.Contains(joined, "first") {
				sawFirstAt = time.Since(start)
				return
			}
			if time.Since(start) > 10*time.Second {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if _, err := sess.CallTool(testContext(t, time.Minute), params); err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	<-done
	if sawFirstAt == 0 || total-sawFirstAt < time.Second {
		t.Errorf("progress with \"first\" came at %v of a %v call; want it while the code still ran", sawFirstAt, total)
	}
}
