package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestDoctorChecksInterpreters: the doctor runs each language's program in
// its image, and does not say everything is in place when one is missing
// (busybox has no python3, the Python image no node).
func TestDoctorChecksInterpreters(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage, testenv.NodeImage, testenv.TinyImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	for _, tc := range []struct {
		name          string
		images        [3]string       // python, javascript, bash
		want          map[string]bool // language -> interpreter found
		wantProblemOf []string        // programs named in the problems
	}{
		{
			name:   "every image has its program",
			images: [3]string{testenv.PythonImage, testenv.NodeImage, testenv.PythonImage},
			want:   map[string]bool{"python": true, "javascript": true, "bash": true},
		},
		{
			name:          "programs missing",
			images:        [3]string{testenv.TinyImage, testenv.PythonImage, testenv.PythonImage},
			want:          map[string]bool{"python": false, "javascript": false, "bash": true},
			wantProblemOf: []string{"python3", "node"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, env := e2eHome(t)
			cfg := fmt.Sprintf("[images]\npython = %q\njavascript = %q\nbash = %q\npull = \"never\"\n[pool]\nsize = 0\n",
				tc.images[0], tc.images[1], tc.images[2])
			if err := os.WriteFile(filepath.Join(home, ".config", "mcp-sandbox", "config.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			_, out, errOut := clitest.Run(t, bin, env, "doctor", "--json")
			var r struct {
				Images []struct {
					Language         string `json:"language"`
					InterpreterFound bool   `json:"interpreter_found"`
				} `json:"images"`
				Problems []string `json:"problems"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s%s", err, out, errOut)
			}
			got := map[string]bool{}
			for _, im := range r.Images {
				got[im.Language] = im.InterpreterFound
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("interpreter found (-want +got):\n%s", diff)
			}
			problems := strings.Join(r.Problems, "\n")
			for _, p := range tc.wantProblemOf {
				if !strings.Contains(problems, "cannot run "+p) {
					t.Errorf("no problem names %s:\n%s", p, problems)
				}
			}
			if tc.wantProblemOf == nil && strings.Contains(problems, "cannot run") {
				t.Errorf("a problem with an image that is fine:\n%s", problems)
			}
			_, text, _ := clitest.Run(t, bin, env, "doctor")
			if tc.wantProblemOf != nil && strings.Contains(text, "Everything needed is in place") {
				t.Errorf("the doctor says everything is in place:\n%s", text)
			}
		})
	}
}

// TestDoctorSaysWhetherLanguagesCanRun: the doctor fails (exit 1, "ok":
// false) when code in a configured language cannot run — an image that is
// missing and that the engine's registry cannot give (an unreachable
// registry, an unknown name), a missing image with pull = "never", an
// image without its interpreter, a CPU limit above the engine's — and
// names the setting to change; an image the registry has is fine.
func TestDoctorSaysWhetherLanguagesCanRun(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage, testenv.NodeImage, testenv.TinyImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	fine := fmt.Sprintf("[images]\npython = %q\njavascript = %q\nbash = %q\n", testenv.PythonImage, testenv.NodeImage, testenv.PythonImage)
	for _, tc := range []struct {
		name      string
		config    string
		wantOK    bool
		runnable  map[string]bool
		wantInMsg []string
	}{
		{
			name: "all present", config: fine + "pull = \"never\"\n", wantOK: true,
			runnable: map[string]bool{"python": true, "javascript": true, "bash": true},
		},
		{
			name:     "unreachable registry",
			config:   strings.Replace(fine, testenv.PythonImage, "127.0.0.1:5999/nothing/python:3", 1) + "pull = \"missing\"\n",
			runnable: map[string]bool{"python": false, "javascript": true, "bash": true},
			wantInMsg: []string{"127.0.0.1:5999/nothing/python:3 (python) is not present and cannot be pulled",
				`set python = "IMAGE" under [images]`},
		},
		{
			name:      "unknown to the registry",
			config:    strings.Replace(fine, testenv.NodeImage, "127.0.0.1:5000/mcp-sandbox-test/nope:1", 1) + "pull = \"missing\"\n",
			runnable:  map[string]bool{"python": true, "javascript": false, "bash": true},
			wantInMsg: []string{"(javascript) is not present and cannot be pulled"},
		},
		{
			name:      "missing and never pulled",
			config:    strings.Replace(fine, testenv.NodeImage, "127.0.0.1:5000/mcp-sandbox-test/nope:2", 1) + "pull = \"never\"\n",
			runnable:  map[string]bool{"python": true, "javascript": false, "bash": true},
			wantInMsg: []string{`images.pull is "never": code in javascript cannot run`},
		},
		{
			name:      "interpreter missing",
			config:    strings.Replace(fine, testenv.NodeImage, testenv.TinyImage, 1) + "pull = \"never\"\n",
			runnable:  map[string]bool{"python": true, "javascript": false, "bash": true},
			wantInMsg: []string{"cannot run node"},
		},
		{
			name:      "more CPUs than the engine has",
			config:    fine + fmt.Sprintf("pull = \"never\"\n[limits]\ncpus = %d\n", runtime.NumCPU()+1),
			runnable:  map[string]bool{"python": true, "javascript": true, "bash": true},
			wantInMsg: []string{fmt.Sprintf("limits.cpus = %d but the engine has", runtime.NumCPU()+1)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, env := e2eHome(t)
			cfg := testenv.WithRuntime(tc.config + "[pool]\nsize = 0\n")
			if err := os.WriteFile(filepath.Join(home, ".config", "mcp-sandbox", "config.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := clitest.Run(t, bin, env, "doctor", "--json")
			var r struct {
				OK     bool `json:"ok"`
				Images []struct {
					Language string `json:"language"`
					Runnable bool   `json:"runnable"`
				} `json:"images"`
				Problems []string `json:"problems"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s%s", err, out, errOut)
			}
			if r.OK != tc.wantOK || (code == 0) != tc.wantOK {
				t.Errorf("ok = %v, exit %d; want ok %v\n%s", r.OK, code, tc.wantOK, strings.Join(r.Problems, "\n"))
			}
			got := map[string]bool{}
			for _, im := range r.Images {
				got[im.Language] = im.Runnable
			}
			if diff := cmp.Diff(tc.runnable, got); diff != "" {
				t.Errorf("runnable (-want +got):\n%s", diff)
			}
			problems := strings.Join(r.Problems, "\n")
			for _, w := range tc.wantInMsg {
				if !strings.Contains(problems, w) {
					t.Errorf("no problem says %q:\n%s", w, problems)
				}
			}
		})
	}
}
