package mcpserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// The attacks of issue 10 on the host fence, each made as an attacker
// would, with nothing but tool calls to the real binary on the real
// engine. Each checks that every file outside the write root is unchanged
// byte for byte, and that no symlink under the write root leads out.

// fenceHome is a home directory with a write root inside it and files
// beside it that an attack would like to change.
type fenceHome struct {
	home, out string
	before    map[string]string
}

func newFenceHome(t *testing.T) *fenceHome {
	t.Helper()
	home := t.TempDir()
	h := &fenceHome{home: home, out: filepath.Join(home, "out")}
	for name, content := range map[string]string{
		".bashrc":               "# the user's own\n",
		"outside/victim.txt":    "precious\n",
		"outside/R/sub/keep.md": "keep\n",
		"src/data.txt":          "input\n",
	} {
		p := filepath.Join(home, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.before = h.outside(t)
	return h
}

// outside hashes every entry of the home that is not in the write root.
func (h *fenceHome) outside(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(h.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == h.out {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(h.home, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			m[rel] = "link -> " + l
		case d.IsDir():
			m[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			m[rel] = hex.EncodeToString(sum[:8])
		}
		return nil
	})
	return m
}

// check fails the test if anything outside the write root changed, or a
// link under it resolves outside it, or a staging directory was left.
func (h *fenceHome) check(t *testing.T) {
	t.Helper()
	after := h.outside(t)
	for k, v := range after {
		if h.before[k] != v {
			t.Errorf("outside the write root: %s is now %q (was %q)", k, v, h.before[k])
		}
	}
	for k := range h.before {
		if _, ok := after[k]; !ok {
			t.Errorf("outside the write root: %s was removed", k)
		}
	}
	realOut, _ := filepath.EvalSymlinks(h.out)
	filepath.WalkDir(h.out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".mcp-sandbox-copy-") {
			t.Errorf("staging directory left: %s", p)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			r, err := filepath.EvalSymlinks(p)
			if err != nil || !strings.HasPrefix(r+string(filepath.Separator), realOut+string(filepath.Separator)) {
				l, _ := os.Readlink(p)
				t.Errorf("link under the write root leads out: %s -> %s", p, l)
			}
		}
		return nil
	})
}

func (h *fenceHome) config(extra string) string {
	return fmt.Sprintf("[files]\nread_roots = [%q]\nwrite_root = %q\n%s", filepath.Join(h.home, "src"), h.out, extra)
}

func mustOK(t *testing.T, res *mcp.CallToolResult, what string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: %s", what, text(res))
	}
}

// backendEnv makes the environment of a real server on one backend, its
// config ending with extraTOML: serverEnv for the Docker engine, and
// kubeCluster.serverEnv for the test cluster.
type backendEnv func(t *testing.T, extraTOML string) []string

// startFenceServer starts the real server on h's roots (with extra lines
// for [files]) on the backend env makes, and connects the official SDK's
// client to it.
func startFenceServer(t *testing.T, env backendEnv, h *fenceHome, extra string) *mcp.ClientSession {
	t.Helper()
	return sdkClient(t, startServer(t, env(t, h.config(extra))), nil)
}

func createWith(t *testing.T, sess *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	res := call(t, sess, "sandbox_create", args)
	mustOK(t, res, "sandbox_create")
	var c struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &c)
	return c.SandboxID
}

// Attack 1: the sandbox's env shapes the server's own tar (TAR_OPTIONS
// renames entries), and link targets that are clean as text climb out
// through another link. Before the fix this left ~/.bash_aliases pointing
// at the sandbox's script. Now the env never reaches the server's tar, and
// no link is made on the host; with files.copy_out_links on, only links
// that resolve inside the copy are.
func TestAttackCopyOutTarOptionsLinks(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackCopyOutTarOptionsLinks(t, serverEnv)
}

func attackCopyOutTarOptionsLinks(t *testing.T, env backendEnv) {
	for _, links := range []bool{false, true} {
		t.Run(fmt.Sprintf("copy_out_links=%v", links), func(t *testing.T) {
			h := newFenceHome(t)
			sess := startFenceServer(t, env, h, fmt.Sprintf("copy_out_links = %v\n", links))
			id := createWith(t, sess, map[string]any{"env": map[string]any{
				"TAR_OPTIONS": "--sort=name --transform=s,^top/t$,top/zz, --transform=s,^top/t/,top/s1/,",
			}})
			// From the write root's B/top, ../../../.bash_aliases is the
			// home's; s1 resolves to the home through a/s2 -> ..
			res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "mkdir -p /tmp/top && cd /tmp/top && mkdir t a && " +
				"echo 'echo pwned' > payload.sh && ln -s ../B/top/payload.sh t/.bash_aliases && ln -s .. a/s2 && " +
				"ln -s a/s2/a/s2/a/s2/../../../.. s1 && ln -s a/s2/a/s2/../../../../.bashrc rc && echo $TAR_OPTIONS"})
			mustOK(t, res, "sandbox_exec")
			if !strings.Contains(text(res), "--transform") {
				t.Fatalf("the sandbox did not get its env: %s", text(res))
			}
			res = call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": "/tmp/top", "host_path": "B/top"})
			mustOK(t, res, "copy_out")
			var got struct {
				Files        int `json:"files"`
				Symlinks     int `json:"symlinks"`
				SkippedLinks []struct {
					Path, Target string
				} `json:"skipped_links"`
			}
			structured(t, res, &got)
			paths := map[string]string{}
			for _, l := range got.SkippedLinks {
				paths[l.Path] = l.Target
			}
			// The archive was not transformed: the names are the sandbox's.
			if _, ok := paths["top/t/.bash_aliases"]; !ok {
				t.Errorf("t/.bash_aliases not listed as a skipped link (was the server's tar steered by TAR_OPTIONS?): %+v", got)
			}
			if _, err := os.Lstat(filepath.Join(h.out, "B", "top", "zz")); err == nil {
				t.Error("the server's tar followed the sandbox's TAR_OPTIONS")
			}
			wantMade := 0
			if links {
				wantMade = 1 // a/s2 -> .. stays inside the copy
			}
			if got.Symlinks != wantMade || got.Files != 1 {
				t.Errorf("made %d links and %d files, want %d and 1: %+v", got.Symlinks, got.Files, wantMade, got)
			}
			h.check(t)
		})
	}
}

// Attack 2: concurrent copy_out calls, one landing a tree whose link sub
// climbs out through a/s2 -> .., others writing R/sub/victim.txt with
// overwrite. Before the fix this overwrote a file outside the write root
// and left staging directories there.
func TestAttackConcurrentCopyOut(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackConcurrentCopyOut(t, serverEnv)
}

func attackConcurrentCopyOut(t *testing.T, env backendEnv) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "copy_out_links = true\n")
	id := createWith(t, sess, nil)
	mustOK(t, call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "mkdir -p vlink/a && cd vlink && ln -s .. a/s2 && " +
		"ln -s a/s2/a/s2/../../../../outside/R/sub sub && cd .. && echo overwritten > victim.txt"}), "set-up")
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				args := map[string]any{"sandbox_id": id, "path": "victim.txt", "host_path": "R/sub/victim.txt", "overwrite": true}
				if w == 0 {
					args = map[string]any{"sandbox_id": id, "path": "vlink", "host_path": "R", "overwrite": true}
				}
				// Not call(): t.Fatal must not run outside the test's goroutine.
				if _, err := sess.CallTool(testContext(t, 2*time.Minute), &mcp.CallToolParams{Name: "copy_out", Arguments: args}); err != nil {
					t.Errorf("copy_out: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	h.check(t)
}

// Host-side swap race: while copy_out writes R/sub/victim.txt, a host
// process keeps swapping R/sub for a symlink to outside the write root.
// Before the fix 54 of 300 copies got out. 300 rounds.
func TestAttackHostSwapDuringCopyOut(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackHostSwapDuringCopyOut(t, serverEnv, 300)
}

func attackHostSwapDuringCopyOut(t *testing.T, env backendEnv, rounds int) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "")
	id := createWith(t, sess, nil)
	mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "victim.txt", "content": "from the sandbox"}), "write_file")
	os.MkdirAll(filepath.Join(h.out, "R", "sub"), 0o755)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sub, parked := filepath.Join(h.out, "R", "sub"), filepath.Join(h.out, "R", "parked")
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(parked)
			os.Rename(sub, parked)
			os.Symlink(filepath.Join(h.home, "outside", "R", "sub"), sub)
			os.Remove(sub)
			os.Symlink("../../outside", sub)
			os.Remove(sub)
			os.MkdirAll(sub, 0o755)
		}
	}()
	for i := 0; i < rounds; i++ {
		call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": "victim.txt", "host_path": "R/sub/victim.txt", "overwrite": true})
	}
	close(stop)
	wg.Wait()
	// The swapper's own links may be left in R/; remove them before the
	// check, which is about what copy_out made.
	if fi, err := os.Lstat(filepath.Join(h.out, "R", "sub")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		os.Remove(filepath.Join(h.out, "R", "sub"))
	}
	h.check(t)
}

// Sandbox-side swap race: a process in the sandbox keeps swapping
// /workspace/d between a real directory and a link to /etc while read_file,
// list_files and copy_out read d/shadow. Before the fix 29 of 150 reads
// returned the image's root-only /etc/shadow; the file tools now act with
// the sandbox user's rights. 300 rounds.
func TestAttackSandboxSwapDuringRead(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackSandboxSwapDuringRead(t, serverEnv, 300)
}

func attackSandboxSwapDuringRead(t *testing.T, env backendEnv, rounds int) {
	h := newFenceHome(t)
	sess := startFenceServer(t, env, h, "copy_out_links = true\n")
	id := createWith(t, sess, nil)
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "head -c 4 /etc/shadow 2>&1; mkdir -p real && echo harmless > real/shadow && " +
		"(while :; do mv -T real d; mv -T d real; ln -s /etc d; rm -f d; done) >/dev/null 2>&1 & echo started"})
	mustOK(t, res, "swapper")
	if strings.HasPrefix(text(res), "root") {
		t.Fatalf("the sandbox user can read /etc/shadow itself; the test means nothing: %s", text(res))
	}
	leaked := func(s string) bool { return strings.Contains(s, "root:") }
	for i := 0; i < rounds; i++ {
		switch i % 3 {
		case 0:
			res = call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": "d/shadow"})
			if leaked(text(res)) {
				t.Fatalf("round %d: read_file returned /etc/shadow: %s", i, text(res))
			}
		case 1:
			res = call(t, sess, "list_files", map[string]any{"sandbox_id": id, "path": "d"})
		case 2:
			res = call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": "d/shadow", "host_path": fmt.Sprintf("r/%d", i)})
		}
	}
	filepath.WalkDir(h.out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); leaked(string(b)) {
				t.Errorf("copy_out brought /etc/shadow to the host: %s", p)
			}
		}
		return nil
	})
	h.check(t)
}
