package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestDoctorChecksInterpreters: the doctor runs each language's program in
// its image, and does not say everything is in place when one is missing
// (busybox has no python3, the Python image no node).
func TestDoctorChecksInterpreters(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage, testenv.NodeImage, testenv.TinyImage)
	bin := buildServer(t)
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
			_, out, errOut := runBin(t, bin, env, "doctor", "--json")
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
			_, text, _ := runBin(t, bin, env, "doctor")
			if tc.wantProblemOf != nil && strings.Contains(text, "Everything needed is in place") {
				t.Errorf("the doctor says everything is in place:\n%s", text)
			}
		})
	}
}
