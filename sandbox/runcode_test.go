package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// cell is one run_code call in a sequence and what it must give.
type cell struct {
	code      string
	reset     bool
	wait      time.Duration // before the cell runs
	want      cellOut
	stderrHas string
}

// cellOut is the part of a result a cell checks exactly.
type cellOut struct {
	Stdout    string
	Result    string
	ExitCode  int
	StateLost bool
}

// runCells runs cells in order in one sandbox and compares each result.
func runCells(t *testing.T, eng *sandbox.Engine, id, lang string, cells []cell) {
	t.Helper()
	for i, c := range cells {
		time.Sleep(c.wait)
		res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: id, Language: lang, Code: c.code, Reset: c.reset})
		if err != nil {
			t.Fatalf("cell %d %q: %v", i, c.code, err)
		}
		got := cellOut{Stdout: res.Stdout, Result: res.Result, ExitCode: res.ExitCode, StateLost: res.StateLost}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("cell %d %q (-want +got):\n%s\nstderr: %s", i, c.code, diff, res.Stderr)
		}
		if !strings.Contains(res.Stderr, c.stderrHas) {
			t.Errorf("cell %d %q: stderr %q does not contain %q", i, c.code, res.Stderr, c.stderrHas)
		}
	}
}

func TestRunCodePythonSession(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	runCells(t, eng, sb.ID, "", []cell{
		{code: "x = 41", want: cellOut{}},
		{code: "print(x + 1)", want: cellOut{Stdout: "42\n"}},
		{code: "x", want: cellOut{Result: "41"}},
		{code: "y = [x] * 2\ny", want: cellOut{Result: "[41, 41]"}},
		{code: "print('a')\nNone", want: cellOut{Stdout: "a\n"}},
		{code: "'text'", want: cellOut{Result: "'text'"}},
		{code: "import subprocess\n_ = subprocess.run(['sh', '-c', 'echo from-child; echo to-stderr >&2'])\nprint('after')",
			want: cellOut{Stdout: "from-child\nafter\n"}, stderrHas: "to-stderr"},
		{code: "import os\nos.write(1, b'raw fd\\n')\nos.getcwd(), os.getuid()", want: cellOut{Stdout: "raw fd\n", Result: "('/workspace', 1000)"}},
		{code: "1/0", want: cellOut{ExitCode: 1}, stderrHas: "ZeroDivisionError: division by zero"},
		{code: "x  # state survives an error", want: cellOut{Result: "41"}},
		{code: "def f(:", want: cellOut{ExitCode: 1}, stderrHas: "SyntaxError"},
		{code: "import sys\nsys.exit(3)", want: cellOut{ExitCode: 3}},
		{code: "import asyncio\nawait asyncio.sleep(0.01)\nz = x + 1\nz", want: cellOut{Result: "42"}},
		{code: "z", want: cellOut{Result: "42"}},
		{code: "print('\\x1e' + 'not a frame', end='')", want: cellOut{Stdout: "\x1enot a frame"}},
		{code: "import sys; sys.stdout = open('/dev/null', 'w'); print('lost')", want: cellOut{}},
		{code: "print('stdout restored')", want: cellOut{Stdout: "stdout restored\n"}},
		// Output from background work between calls comes with the next.
		{code: "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.1), print('late', flush=True))).start()", want: cellOut{}},
		{code: "print('now')", wait: 2 * time.Second, want: cellOut{Stdout: "[written after the previous call had ended]\nlate\n[this call]\nnow\n"}},
		{code: "print('quiet again')", want: cellOut{Stdout: "quiet again\n"}},
		{code: "x = 1", reset: true, want: cellOut{StateLost: true}},
		{code: "z", want: cellOut{ExitCode: 1}, stderrHas: "NameError"},
		{code: "import os\nprint('bye', flush=True)\nos._exit(5)", want: cellOut{Stdout: "bye\n", ExitCode: 5, StateLost: true}, stderrHas: "exited with code 5"},
		{code: "'x' in globals()", want: cellOut{Result: "False"}},
	})
}

// TestRunCodePythonOutputAfterRun: a run ends while a process it started
// floods its stdout (the runner reads the pipe empty at the end without
// waiting for the flood to stop), and the runner outlives code that closes
// its stdout.
func TestRunCodePythonOutputAfterRun(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	flood := mustRun(t, eng, sb.ID, "import subprocess\n_p = subprocess.Popen(['sh', '-c', 'head -c 3000000 /dev/zero | tr \"\\\\0\" y'])\nimport time\ntime.sleep(0.2)\n'started'")
	if flood.ExitCode != 0 || flood.Result != "'started'" || flood.StateLost {
		t.Fatalf("flood cell = %+v", flood)
	}
	after := mustRun(t, eng, sb.ID, "_p.wait()\nprint('after')")
	if after.ExitCode != 0 || after.StateLost || !strings.HasSuffix(after.Stdout, "after\n") {
		t.Fatalf("cell after the flood = exit %d, state lost %v, stdout ending %q", after.ExitCode, after.StateLost, tail(after.Stdout))
	}
	t.Logf("flood: %d bytes in the run, %d in the next", len(flood.Stdout), len(after.Stdout))
	runCells(t, eng, sb.ID, "", []cell{
		{code: "import os\nos.close(1)\nprint('gone')", want: cellOut{ExitCode: 1}, stderrHas: "Bad file descriptor"},
		{code: "import sys\nprint('to stderr', file=sys.stderr)\n7", want: cellOut{Result: "7"}, stderrHas: "to stderr\n"},
	})
}

func TestRunCodeJavaScriptSession(t *testing.T) {
	testenv.Docker(t, testenv.NodeImage)
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	runCells(t, eng, sb.ID, "", []cell{
		// The names the runner's bootstrap used are the code's to declare.
		{code: "const fs = require('fs'); let h = 2; const len = 3; const nonce = 4; fs.existsSync('/') && h + len + nonce", want: cellOut{Result: "9"}},
		{code: "let x = 41; const y = 1; var z = 2; function f() { return 5 }", want: cellOut{}},
		{code: "console.log(x + y)", want: cellOut{Stdout: "42\n"}},
		{code: "x + z + f()", want: cellOut{Result: "48"}},
		{code: "const c = 1", want: cellOut{}},
		{code: "const c = 2; c", want: cellOut{Result: "2"}}, // a cell run again after a fix
		{code: "const {p, q: [r]} = {p: 1, q: [2]}; c + p + r", want: cellOut{Result: "5"}},
		{code: "c", want: cellOut{Result: "2"}},
		// Errors in such a cell point at the cell's own line and column.
		{code: "const e1 = 1;\n  null.x", want: cellOut{ExitCode: 1}, stderrHas: ":2:8\n"},
		{code: "const e2 = await 1;\nnull.x", want: cellOut{ExitCode: 1}, stderrHas: ":2:6\n"},
		{code: "const h = hoisted(); function hoisted() { return 'h' }\nclass Kls { m() { return h + 'k' } }\nnew Kls().m()", want: cellOut{Result: "'hk'"}},
		{code: "hoisted() + new Kls().m()", want: cellOut{Result: "'hhk'"}},
		{code: "({a: 1, b: [1, 2]})", want: cellOut{Result: "{ a: 1, b: [ 1, 2 ] }"}},
		{code: "{a: 1}", want: cellOut{Result: "{ a: 1 }"}},
		{code: "let x = 5; x * 2", want: cellOut{Result: "10"}},
		{code: "x", want: cellOut{Result: "5"}},
		{code: "'text'", want: cellOut{Result: "'text'"}},
		{code: "require('child_process').execSync('echo from-child', {stdio: 'inherit'}); console.log('after')", want: cellOut{Stdout: "from-child\nafter\n"}},
		{code: "null.x", want: cellOut{ExitCode: 1}, stderrHas: "TypeError"},
		{code: "function g( {", want: cellOut{ExitCode: 1}, stderrHas: "SyntaxError"},
		{code: "const t = await Promise.resolve(7); t * 6", want: cellOut{Result: "42"}},
		{code: "t", want: cellOut{Result: "7"}},
		{code: "console.error('to stderr'); process.cwd()", want: cellOut{Result: "'/workspace'"}, stderrHas: "to stderr"},
		{code: "setTimeout(() => console.log('late'), 100); 1", want: cellOut{Result: "1"}},
		{code: "console.log('now')", wait: 2 * time.Second, want: cellOut{Stdout: "[written after the previous call had ended]\nlate\n[this call]\nnow\n"}},
		{code: "x", reset: true, want: cellOut{ExitCode: 1, StateLost: true}, stderrHas: "ReferenceError"},
		{code: "var k = 1; console.log('bye'); process.exit(3)", want: cellOut{Stdout: "bye\n", ExitCode: 3, StateLost: true}},
		{code: "typeof k", want: cellOut{Result: "'undefined'"}},
	})
}

// A write larger than the FIFO the resident Node's stdout is arrives
// whole: Node makes the FIFO non-blocking, and a write the relay has not
// made room for yet (EAGAIN) once ended the stream, the rest of the run's
// output lost without a word (the output file held 65,536 bytes of 1 MiB).
func TestRunCodeJavaScriptBigWrite(t *testing.T) {
	testenv.Docker(t, testenv.NodeImage)
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "console.log('x'.repeat(1 << 20)); console.log('end'); 'ok'"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "'ok'" || res.OutputFile == "" || !strings.HasSuffix(res.Stdout, "end\n") {
		t.Fatalf("result %q, output_file %q, stdout ending %q, stderr %q", res.Result, res.OutputFile, tail(res.Stdout), res.Stderr)
	}
	if got := mustExec(t, eng, sb.ID, "wc -c < "+res.OutputFile).Stdout; got != "1048581\n" {
		t.Errorf("the output file holds %s bytes, want 1048581 (1 MiB, a newline, end and a newline)", strings.TrimSpace(got))
	}
}

func TestRunCodeBashSession(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "bash"})
	runCells(t, eng, sb.ID, "", []cell{
		{code: "mkdir -p sub && cd sub && export FOO=bar && x=5 && greet() { echo \"hi $1\"; }", want: cellOut{}},
		{code: "pwd; echo \"$FOO $x\"; greet you; sh -c 'echo child sees $FOO'", want: cellOut{Stdout: "/workspace/sub\nbar 5\nhi you\nchild sees bar\n"}},
		{code: "cd /tmp; y=1; exit 4", want: cellOut{ExitCode: 4}},
		{code: "pwd; echo \"$y\"", want: cellOut{Stdout: "/tmp\n1\n"}},
		{code: "pwd; echo \"[$FOO]\"", reset: true, want: cellOut{Stdout: "/workspace\n[]\n"}},
	})
}

func TestRunCodeStreamsOutput(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	var mu sync.Mutex
	var firstAt time.Time
	var seen bytes.Buffer
	start := time.Now()
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{
		SandboxID: sb.ID,
		Code:      "import time, sys\nprint('first')\nprint('err-first', file=sys.stderr)\ntime.sleep(1.5)\nprint('second')",
		Output: func(stream string, p []byte) {
			mu.Lock()
			defer mu.Unlock()
			if firstAt.IsZero() {
				firstAt = time.Now()
			}
			seen.WriteString(stream + ":" + string(p))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	if res.Stdout != "first\nsecond\n" || res.Stderr != "err-first\n" {
		t.Errorf("got stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if firstAt.IsZero() || end.Sub(firstAt) < time.Second {
		t.Errorf("first output arrived %v after the start and %v before the end; want it streamed while the code ran", firstAt.Sub(start), end.Sub(firstAt))
	}
	for _, want := range []string{"stdout:first\n", "stderr:err-first\n", "stdout:second\n"} {
		if !strings.Contains(seen.String(), want) {
			t.Errorf("streamed output %q lacks %q", seen.String(), want)
		}
	}
}

// The resident Python writes its output out in bursts, not a system call
// per line (200,000 printed lines took 47 s under gVisor), and loses
// nothing and reorders nothing that line buffering kept: a lone line comes
// before a subprocess's output, a burst before a kill on timeout is
// delivered, as is a line with no newline; a forked child neither loses
// its output at os._exit nor writes its parent's again.
func TestRunCodeOutputBursts(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	var lines, child, parent strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&lines, "%d\n", i)
	}
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&parent, "p %d\n", i)
		fmt.Fprintf(&child, "c %d\n", i)
	}
	runCells(t, eng, sb.ID, "", []cell{
		{code: "import os, subprocess\nfor i in range(3):\n    print('line', i)\n    subprocess.run(['echo', 'sub'])\n    print('os')\n    os.write(1, b'write\\n')",
			want: cellOut{Stdout: "line 0\nsub\nos\nwrite\nline 1\nsub\nos\nwrite\nline 2\nsub\nos\nwrite\n"}},
		{code: "import os, subprocess\nfor i in range(300):\n    print('p', i)\nsubprocess.run(['echo', 'sub'])\nfor i in range(300):\n    print('p', i)\n_ = os.system('echo system')",
			want: cellOut{Stdout: parent.String() + "sub\n" + parent.String() + "system\n"}},
		// Each fork is made during a burst, as the flusher may be writing.
		{code: "import os\nfor k in range(4):\n    for i in range(300):\n        print('p', i)\n    pid = os.fork()\n    if pid == 0:\n        for i in range(300):\n            print('c', i)\n        os._exit(0)\n    os.waitpid(pid, 0)\nprint('done')",
			want: cellOut{Stdout: strings.Repeat(parent.String()+child.String(), 4) + "done\n"}},
	})
	killedCells(t, eng, sb.ID, []killedCell{
		{"for i in range(2000):\n    print(i)\nwhile True:\n    pass", lines.String()},
		{"import time\nprint('prompt', end='')\ntime.sleep(100)", "prompt"},
	})
}

// TestRunCodeJavaScriptOutputBursts: the Node runner holds output in
// bursts; what it keeps of line buffering is each case below, including a
// burst right before a kill or process.exit delivered whole.
func TestRunCodeJavaScriptOutputBursts(t *testing.T) {
	testenv.Docker(t, testenv.NodeImage)
	eng, _ := newEngine(t, func(c *config.Config) { c.Limits.OutputBytes = 1 << 20 })
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	var lines, parent strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&lines, "%d\n", i)
	}
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&parent, "p %d\n", i)
	}
	big := strings.Repeat("x", 100000) + "\n"
	runCells(t, eng, sb.ID, "", []cell{
		{code: "const cp = require('child_process'), fs = require('fs');\nfor (let i = 0; i < 3; i++) { console.log('line', i); cp.execSync('echo sub', {stdio: 'inherit'}); console.log('fs'); fs.writeSync(1, 'write\\n'); }",
			want: cellOut{Stdout: "line 0\nsub\nfs\nwrite\nline 1\nsub\nfs\nwrite\nline 2\nsub\nfs\nwrite\n"}},
		{code: "for (let i = 0; i < 300; i++) console.log('p', i);\ncp.spawnSync('echo', ['sub'], {stdio: 'inherit'});\nfor (let i = 0; i < 300; i++) console.log('p', i);\nconsole.log('x'.repeat(100000));\nfor (let i = 0; i < 300; i++) console.log('p', i);\nawait new Promise((done) => cp.spawn('echo', ['spawned'], {stdio: 'inherit'}).on('close', () => done()));",
			want: cellOut{Stdout: parent.String() + "sub\n" + parent.String() + big + parent.String() + "spawned\n"}},
		{code: "for (let i = 0; i < 2000; i++) console.log(i);\nnull.x", want: cellOut{Stdout: lines.String(), ExitCode: 1}, stderrHas: "TypeError"},
	})
	killedCells(t, eng, sb.ID, []killedCell{
		{"for (let i = 0; i < 2000; i++) console.log(i);\nfor (;;) {}", lines.String()},
		{"process.stdout.write('prompt');\nfor (;;) {}", "prompt"},
	})
	runCells(t, eng, sb.ID, "", []cell{
		{code: "for (let i = 0; i < 2000; i++) console.log(i);\nprocess.exit(3)", want: cellOut{Stdout: lines.String(), ExitCode: 3, StateLost: true}, stderrHas: "exited with code 3"},
	})
	// Held output whose fd the code closes is lost, not the run's end.
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, TimeoutSeconds: 20,
		Code: "for (let i = 0; i < 2000; i++) console.log(i);\nrequire('fs').closeSync(1);\n'closed'"})
	if err != nil || res.TimedOut || res.ExitCode != 0 || res.Result != "'closed'" {
		t.Fatalf("cell closing stdout: %+v, %v", res, err)
	}
	runCells(t, eng, sb.ID, "", []cell{{code: "console.error('still here'); 7", want: cellOut{Result: "7"}, stderrHas: "still here"}})
}

// killedCell is code that a 2 s timeout kills, and the stdout it must
// have written by then.
type killedCell struct{ code, want string }

func killedCells(t *testing.T, eng *sandbox.Engine, id string, cells []killedCell) {
	t.Helper()
	for _, c := range cells {
		res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: id, Code: c.code, TimeoutSeconds: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.Stdout != c.want {
			t.Errorf("%q: timed out %v, stdout %d bytes ending %q; want %d bytes ending %q", c.code, res.TimedOut, len(res.Stdout), tail(res.Stdout), len(c.want), tail(c.want))
		}
	}
}

func tail(s string) string { return s[max(0, len(s)-20):] }

// processes lists the command lines running in a sandbox.
func processes(t *testing.T, eng *sandbox.Engine, id string) string {
	t.Helper()
	return mustExec(t, eng, id, `for d in /proc/[0-9]*; do tr '\0' ' ' < $d/cmdline 2>/dev/null; echo; done`).Stdout
}

func TestRunCodeTimeoutRestartsInterpreter(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	runCells(t, eng, sb.ID, "", []cell{{code: "x = 1", want: cellOut{}}})
	start := time.Now()
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{
		SandboxID: sb.ID, TimeoutSeconds: 2,
		Code: "import subprocess, time\nsubprocess.Popen(['sleep', '4242'])\nprint('started', flush=True)\ntime.sleep(100)",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := cellOut{Stdout: res.Stdout, ExitCode: res.ExitCode, StateLost: res.StateLost}
	if diff := cmp.Diff(cellOut{Stdout: "started\n", ExitCode: 124, StateLost: true}, got); diff != "" || !res.TimedOut {
		t.Errorf("timeout result (-want +got):\n%s\ntimed_out=%v stderr=%q", diff, res.TimedOut, res.Stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("timeout took %v", d)
	}
	if ps := processes(t, eng, sb.ID); strings.Contains(ps, "sleep 4242") || strings.Contains(ps, "mcp-sandbox-runner") {
		t.Errorf("the interpreter's tree survived the timeout:\n%s", ps)
	}
	// A fresh interpreter answers the next call; the old variables are gone.
	runCells(t, eng, sb.ID, "", []cell{
		{code: "x", want: cellOut{ExitCode: 1}, stderrHas: "NameError"},
		{code: "x = 2\nx", want: cellOut{Result: "2"}},
	})
}

func TestRunCodeCancelKillsInterpreter(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	runCells(t, eng, sb.ID, "", []cell{{code: "x = 1", want: cellOut{}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	res, err := eng.RunCode(ctx, sandbox.RunCodeRequest{
		SandboxID: sb.ID,
		Code:      "import subprocess, time\nsubprocess.Popen(['sleep', '4343'])\nprint('go', flush=True)\ntime.sleep(100)",
		Output:    func(string, []byte) { once.Do(cancel) },
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if !res.StateLost || res.Stdout != "go\n" {
		t.Errorf("want state_lost and the output so far, got %+v", res)
	}
	if ps := processes(t, eng, sb.ID); strings.Contains(ps, "sleep 4343") || strings.Contains(ps, "mcp-sandbox-runner") {
		t.Errorf("the interpreter's tree survived cancellation:\n%s", ps)
	}
	// The cancelled call's result never reaches a client: the next one
	// says the state was lost, the one after does not.
	runCells(t, eng, sb.ID, "", []cell{
		{code: "x", want: cellOut{ExitCode: 1, StateLost: true}, stderrHas: "NameError"},
		{code: "1", want: cellOut{Result: "1"}},
	})
}

func TestRunCodeFigures(t *testing.T) {
	testenv.Docker(t, testenv.PlotImage)
	eng, _ := newEngine(t, func(c *config.Config) { c.Images.Python = testenv.PlotImage })
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	for _, tc := range []struct {
		name    string
		code    string
		figures int
		result  string
	}{
		{"backend is Agg", "import matplotlib\nmatplotlib.get_backend()", 0, "'agg'"},
		{"one figure, show is harmless", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('t')\nplt.show()", 1, ""},
		{"figures were closed", "len(plt.get_fignums())", 0, "0"},
		{"shown then closed, as scripts do", "for i in range(3):\n    plt.plot([0, i])\n    plt.show()\n    plt.close()", 3, ""},
		{"two figures, an empty one skipped", "fig, ax = plt.subplots()\nax.bar([1, 2], [3, 4])\nplt.figure(figsize=(2, 2)).add_subplot().plot([0, 1])\nplt.figure()\n7", 2, "7"},
		{"no pyplot, no figures", "1 + 1", 0, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: tc.code, TimeoutSeconds: 120})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || res.Result != tc.result || len(res.Figures) != tc.figures {
				t.Fatalf("exit %d result %q figures %d; want 0 %q %d; stderr %s", res.ExitCode, res.Result, len(res.Figures), tc.result, tc.figures, res.Stderr)
			}
			for _, f := range res.Figures {
				if !bytes.HasPrefix(f, []byte("\x89PNG\r\n\x1a\n")) || len(f) < 1000 {
					t.Errorf("figure of %d bytes is not a PNG", len(f))
				}
			}
		})
	}
}

func TestRunCodeOutputCappedInInterpreter(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "print('BEGIN')\nprint('x' * 20_000_000)\nprint('END')\nlist(range(100000))"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Stdout) > 70000 || !strings.HasPrefix(res.Stdout, "BEGIN\n") || !strings.HasSuffix(res.Stdout, "END\n") {
		t.Errorf("truncated=%v len=%d head=%q tail=%q", res.Truncated, len(res.Stdout), res.Stdout[:min(20, len(res.Stdout))], res.Stdout[max(0, len(res.Stdout)-20):])
	}
	if len(res.Result) > 70000 || !strings.HasPrefix(res.Result, "[0, 1, 2") {
		t.Errorf("result of %d bytes starts %q", len(res.Result), res.Result[:min(20, len(res.Result))])
	}
}

func TestRunCodeInterpreterOOM(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", MemoryMB: 128})
	runCells(t, eng, sb.ID, "", []cell{{code: "x = 1", want: cellOut{}}})
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "l = []\nwhile True: l.append(b'x' * (16 * 1024 * 1024))"})
	switch {
	case gVisorMemoryKill(t, err, 128):
	case err != nil:
		t.Fatal(err)
	case res.ExitCode != 137 || !res.OOMKilled || !res.StateLost:
		t.Errorf("want exit 137, oom_killed and state_lost; got %+v", res)
	}
	if survivorOrNew(t, eng, sb, sandbox.CreateRequest{}) == sb {
		runCells(t, eng, sb.ID, "", []cell{{code: "x", want: cellOut{ExitCode: 1}, stderrHas: "NameError"}})
	}
}

func TestRunCodeFallsBackToExec(t *testing.T) {
	eng, _ := newEngine(t, nil)
	// The Python image has no node: the interpreter cannot start, and the
	// answer must be the one a plain exec gives.
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	for i := 0; i < 2; i++ {
		res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Language: "javascript", Code: "console.log(1)"})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 127 || !strings.Contains(res.Stderr, "not found") || res.Result != "" {
			t.Errorf("call %d: want exit 127 and \"not found\", got %+v", i, res)
		}
	}
}

// garbageBackend is the real Docker backend with interpreters that print
// garbage instead of frames: a fault no real interpreter produces on demand.
type garbageBackend struct{ *docker.Backend }

func (g garbageBackend) Attach(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.Process, error) {
	spec.Cmd = []string{"/bin/sh", "-c", "echo 'Traceback (most recent call last): not a frame'; cat >/dev/null"}
	return g.Backend.Attach(ctx, containerID, spec)
}

func TestRunCodeGarbageInterpreterFallsBack(t *testing.T) {
	eng, _ := newEngineWith(t, engineOptions{wrap: func(b *docker.Backend) backend.Backend { return garbageBackend{b} }})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	for i := 0; i < 2; i++ {
		res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "x = 6 * 7\nprint(x)"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cellOut{Stdout: "42\n"}, cellOut{Stdout: res.Stdout, Result: res.Result, ExitCode: res.ExitCode, StateLost: res.StateLost}); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestRunCodeUnderGVisor checks the interpreters' plumbing (fd
// duplication, FIFOs, killing the tree on timeout) under runsc.
func TestRunCodeUnderGVisor(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage, testenv.NodeImage)
	info, err := cli.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.Runtimes["runsc"]; !ok {
		testenv.Missing(t, "runsc registered with the engine")
	}
	eng, _ := newEngine(t, func(c *config.Config) { c.Docker.Runtime = "runsc" })
	for _, tc := range []struct {
		lang, setup, use, hang, gone, goneResult string
	}{
		{"python", "x = 41", "import subprocess\n_ = subprocess.run(['echo', 'child'])\nx + 1", "import time\ntime.sleep(100)", "'x' in globals()", "False"},
		{"javascript", "var x = 41", "require('child_process').execSync('echo child', {stdio: 'inherit'}); x + 1", "while (true) {}", "typeof x", "'undefined'"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			sb := mustCreate(t, eng, sandbox.CreateRequest{Language: tc.lang})
			runCells(t, eng, sb.ID, "", []cell{
				{code: tc.setup, want: cellOut{}},
				{code: tc.use, want: cellOut{Stdout: "child\n", Result: "42"}},
			})
			res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: tc.hang, TimeoutSeconds: 2})
			if err != nil || !res.TimedOut || !res.StateLost {
				t.Errorf("want a timeout that loses state, got %+v %v", res, err)
			}
			runCells(t, eng, sb.ID, "", []cell{{code: tc.gone, want: cellOut{Result: tc.goneResult}}})
		})
	}
}

// A language whose image lacks its interpreter says so, and which setting
// to change, rather than only "not found".
func TestRunCodeInterpreterMissing(t *testing.T) {
	testenv.Docker(t, testenv.TinyImage)
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Languages = map[string]config.Language{"ruby": {Image: testenv.TinyImage, Run: []string{"ruby", "{file}"}, Extension: ".rb"}}
	})
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Language: "ruby", Code: "puts 1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 127 || !strings.Contains(res.Stderr, "has no ruby, which the ruby language runs") || !strings.Contains(res.Stderr, "languages.ruby.image") {
		t.Errorf("got %d %q", res.ExitCode, res.Stderr)
	}
}

// breakFrame is Python that breaks the interpreter's protocol as any
// code in the sandbox can: a done frame that is not JSON, sent on the
// interpreter's own frame channel.
const breakFrame = "import gc\n" +
	"next(o for o in gc.get_objects() if type(o).__name__ == 'Channel').send('done', b'not json')\n"

// After an interpreter breaks the protocol the next run_code starts a
// fresh one (and says the state was lost), which keeps state again;
// after three breaks in a row the sandbox runs each call with one exec
// and every result says so, until a reset. Before the fix the first break made every
// later call run with exec, silently, even with reset.
func TestRunCodeInterpreterRecoversFromProtocolError(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	broken := cell{code: breakFrame, want: cellOut{ExitCode: 1, StateLost: true}, stderrHas: "the next run_code starts a fresh interpreter"}
	runCells(t, eng, sb.ID, "", []cell{
		{code: "x = 1", want: cellOut{}},
		broken,
		{code: "x = 41", want: cellOut{StateLost: true}},
		{code: "x + 1", want: cellOut{Result: "42"}},
		broken,
		broken,
		{code: breakFrame, want: cellOut{ExitCode: 1, StateLost: true}, stderrHas: "from now on this sandbox runs each run_code in a fresh process"},
		{code: "print(6 * 7)", want: cellOut{Stdout: "42\n"}, stderrHas: "runs each run_code in a fresh process, so variables do not persist: 3 interpreters in a row"},
		// A reset gives it another try.
		{code: "y = 6 * 7", reset: true, want: cellOut{}},
		{code: "y", want: cellOut{Result: "42"}},
	})
}
