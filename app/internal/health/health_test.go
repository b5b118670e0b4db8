package health

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// A configured image that is absent, with pulls off, is a blocking
// problem whose fix names the pull and the [images] setting, with no
// Pull button (the server would not pull); an image
// without its interpreter blocks too; a present image with it does not.
// (The real engine: the window's cards and `doctor` come from here.)
func TestCheckFindsWhatCannotRun(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage, testenv.TinyImage)
	cfg := config.Default()
	cfg.Images.Python = "mcp-sandbox-test/absent:never"
	cfg.Images.JavaScript = testenv.TinyImage // no node
	cfg.Images.Bash = testenv.PythonImage
	cfg.Images.Pull = "never"
	h := Check(context.Background(), cli, cfg, false)
	if h.OK() {
		t.Fatalf("OK with a missing image: %+v", h.Problems)
	}
	kinds := map[string]Problem{}
	for _, p := range h.Blocking() {
		kinds[p.Language] = p
	}
	if p := kinds["python"]; p.Kind != ImageMissing || p.Pull || p.Table != "images" || p.Key != "python" || !strings.Contains(p.Text, "absent:never") {
		t.Errorf("python problem %+v, want a missing image under [images] python, not offered for pulling", p)
	}
	if p := kinds["javascript"]; p.Kind != InterpreterGone || p.Pull {
		t.Errorf("javascript problem %+v, want the interpreter absent", p)
	}
	if p, ok := kinds["bash"]; ok {
		t.Errorf("bash blocked by %+v, its image has bash", p)
	}
}

// A probe the engine does not run within the check's time tells nothing
// about the image: the check says so, blocks nothing, and the tray and
// the window's headline raise no alarm (a busy machine is not an image
// without its interpreter). The same images checked in time block.
func TestCheckLateProbeBlocksNothing(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage, testenv.TinyImage)
	cfg := config.Default()
	cfg.Images.Python = testenv.PythonImage
	cfg.Images.JavaScript = testenv.TinyImage // no node: blocks when checked
	cfg.Images.Bash = testenv.PythonImage
	cfg.Images.Pull = "never"
	old := interpreterProbeTimeout
	interpreterProbeTimeout = time.Millisecond // no container starts that fast
	h := Check(context.Background(), cli, cfg, false)
	interpreterProbeTimeout = old
	if a := h.Attention(); a != "" {
		t.Errorf("late probes raised %q: %+v", a, h.Problems)
	}
	for _, im := range h.Images {
		if !im.InterpreterUnchecked || im.InterpreterFound || im.Runnable {
			t.Errorf("image %+v after a late probe, want unchecked (so not known to run)", im)
		}
	}
	slow := 0
	for _, p := range h.Problems {
		if p.Kind == InterpreterSlow && !p.Blocking && strings.Contains(p.Text, "doctor") {
			slow++
		}
	}
	if slow != len(h.Images) {
		t.Errorf("%d problems say a check was late, want %d: %+v", slow, len(h.Images), h.Problems)
	}
	if h := Check(context.Background(), cli, cfg, false); h.Attention() != "code in javascript cannot run" {
		t.Errorf("checked in time: attention %q, want javascript blocked: %+v", h.Attention(), h.Problems)
	}
}

// A bash whose run names sh, on an image with sh but no bash: run_code
// runs bash all the same (its session script needs it), so the check
// looks for bash and blocks, as `run --lang bash` fails.
func TestCheckLooksForWhatRunCodeRuns(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage, testenv.TinyImage)
	cfg, err := config.Parse("config.toml", []byte(`[images]
python = "`+testenv.PythonImage+`"
javascript = "`+testenv.TinyImage+`"
bash = "`+testenv.TinyImage+`"
pull = "never"
[languages.bash]
run = ["sh", "{file}"]
[languages.javascript]
run = ["sh", "{file}"]
runner = "none"
`))
	if err != nil {
		t.Fatal(err)
	}
	h := Check(context.Background(), cli, cfg, false)
	var bash, js *Problem
	for _, p := range h.Blocking() {
		switch p.Language {
		case "bash":
			bash = &p
		case "javascript":
			js = &p
		}
	}
	if bash == nil || bash.Kind != InterpreterGone || !strings.Contains(bash.Text, "cannot run bash") {
		t.Errorf("bash problem %+v, want bash absent from %s", bash, testenv.TinyImage)
	}
	if js != nil {
		t.Errorf("javascript, run by sh with no resident runner, blocked by %+v", js)
	}
}

// TryImage accepts an image with the program run_code runs and refuses,
// naming the program and the image, one without it (and one the engine
// does not have); LocalImages lists the test images with their sizes.
func TestTryImage(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage, testenv.TinyImage)
	ctx := context.Background()
	cfg := config.Default()
	if err := TryImage(ctx, cli, cfg, "python", testenv.PythonImage); err != nil {
		t.Errorf("python in %s: %v", testenv.PythonImage, err)
	}
	err := TryImage(ctx, cli, cfg, "python", testenv.TinyImage)
	if want := "python3: not found in " + testenv.TinyImage + " — choose another"; err == nil || err.Error() != want {
		t.Errorf("python in %s: %v, want %q", testenv.TinyImage, err, want)
	}
	if err := TryImage(ctx, cli, cfg, "bash", testenv.TinyImage); err == nil || !strings.HasPrefix(err.Error(), "bash: not found in ") {
		t.Errorf("bash in %s: %v, want bash not found", testenv.TinyImage, err)
	}
	if err := TryImage(ctx, cli, cfg, "python", "mcp-sandbox-test/absent:never"); err == nil || !strings.Contains(err.Error(), "is not on this engine") {
		t.Errorf("python in an absent image: %v", err)
	}
	list, err := LocalImages(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	// Podman names a local image localhost/NAME, and takes either name.
	i := slices.IndexFunc(list, func(l LocalImage) bool { return strings.TrimPrefix(l.Ref, "localhost/") == testenv.PythonImage })
	if i < 0 || list[i].Size <= 0 {
		t.Errorf("LocalImages lacks %s (or its size): %+v", testenv.PythonImage, list)
	}
}
