package mcpserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// The attacks of issue 19 on the deny lists, with tool calls only, on the
// real binary and engine: other names of a denied file (a bind mount, a
// hard link, a symlink chain) for copy_in, and copy_out with the whole
// home as its write root. The deny lists compare what a file is, not how
// its name is spelled.

// identityHome is a temporary HOME holding MCP Sandbox's own config (the
// server's live one), a key, shell and client configs, and a project.
type identityHome struct {
	home, config string
	env          []string
}

// newIdentityHome makes an identityHome for a server on the backend env
// makes, with filesTOML at the end of its config.
func newIdentityHome(t *testing.T, backend backendEnv, filesTOML string) *identityHome {
	t.Helper()
	env := backend(t, filesTOML)
	h := &identityHome{}
	var orig string
	for _, kv := range env {
		switch k, v, _ := strings.Cut(kv, "="); k {
		case "HOME":
			h.home = v
		case "MCP_SANDBOX_CONFIG":
			orig = v
		}
	}
	// The server's config where a user's is: ~/.config/mcp-sandbox.
	h.config = filepath.Join(h.home, ".config", "mcp-sandbox", "config.toml")
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		".config/mcp-sandbox/config.toml":       string(b) + "\n# SECRET-CONFIG\n",
		".ssh/id_rsa":                           "SECRET-KEY\n",
		".ssh/authorized_keys":                  "ssh-ed25519 AAAA me@host\n",
		".bashrc":                               "# the user's own\n",
		".config/autostart/app.desktop":         "[Desktop Entry]\nExec=true\n",
		".cursor/mcp.json":                      "{}\n",
		"proj/main.py":                          "print('hello')\n",
		".local/state/mcp-sandbox/http.token":   "SECRET-TOKEN\n",
		"Library/LaunchAgents/com.me.app.plist": "<plist/>\n",
	} {
		p := filepath.Join(h.home, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "MCP_SANDBOX_CONFIG=") {
			env[i] = "MCP_SANDBOX_CONFIG=" + h.config
		}
		if strings.HasPrefix(kv, "MCP_SANDBOX_STATE_DIR=") {
			env[i] = "MCP_SANDBOX_STATE_DIR=" + filepath.Join(h.home, ".local", "state", "mcp-sandbox")
		}
	}
	h.env = env
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// hashes hashes every regular file of the home.
func (h *identityHome) hashes(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.Walk(h.home, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			s := sha256.Sum256(b)
			rel, _ := filepath.Rel(h.home, p)
			if strings.HasPrefix(rel, filepath.Join(".local", "state", "mcp-sandbox")) && info.Name() != "http.token" {
				return nil // the server's own log and audit grow
			}
			m[rel] = hex.EncodeToString(s[:8])
		}
		return nil
	})
	return m
}

// bindMount makes dst a second name of src for the test's length.
func bindMount(t *testing.T, src, dst string) {
	t.Helper()
	must(t, os.MkdirAll(dst, 0o755))
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount --bind %s %s: %v (CI runs as root)", src, dst, err)
		}
		t.Skipf("mount --bind is not permitted here (%v); the bind-mount attack needs root", err)
	}
	t.Cleanup(func() { unix.Unmount(dst, unix.MNT_DETACH) })
}

func refused(t *testing.T, res *mcp.CallToolResult, what, want string) {
	t.Helper()
	if !res.IsError || !strings.Contains(text(res), want) {
		t.Errorf("%s: not refused by %s: %s", what, want, text(res))
	}
}

// copy_in: a bind-mounted second name of ~/.ssh and of a directory inside
// it, a hard link to the key, a symlink chain to it, MCP Sandbox's own config and state. Before the fix
// the bind mount and the hard link handed the key to the sandbox, and the
// config was readable.
func TestAttackReadDenyOtherNames(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackReadDenyOtherNames(t, serverEnv)
}

func attackReadDenyOtherNames(t *testing.T, env backendEnv) {
	h := newIdentityHome(t, env, "[files]\nread_roots = [\"~\"]\n")
	must(t, os.MkdirAll(filepath.Join(h.home, ".ssh", "keys"), 0o700))
	must(t, os.WriteFile(filepath.Join(h.home, ".ssh", "keys", "deploy"), []byte("SECRET-DEPLOY-KEY\n"), 0o600))
	bindMount(t, filepath.Join(h.home, ".ssh"), filepath.Join(h.home, "proj", "alias"))
	// A directory inside the denied one, mounted elsewhere: its ".." is
	// ~/proj, so only its identity tells.
	bindMount(t, filepath.Join(h.home, ".ssh", "keys"), filepath.Join(h.home, "proj", "part"))
	must(t, os.Link(filepath.Join(h.home, ".ssh", "id_rsa"), filepath.Join(h.home, "proj", "notes.txt")))
	must(t, os.Symlink("../.ssh", filepath.Join(h.home, "proj", "l1")))
	must(t, os.Symlink("l1/id_rsa", filepath.Join(h.home, "proj", "l2")))
	sess := sdkClient(t, startServer(t, h.env), nil)
	id := createWith(t, sess, nil)
	for _, p := range []string{"~/proj/alias/id_rsa", "~/proj/alias", "~/proj/part", "~/proj/part/deploy", "~/proj/notes.txt", "~/proj/l2", "~/.config/mcp-sandbox/config.toml",
		"~/.config/mcp-sandbox", "~/.local/state/mcp-sandbox/http.token"} {
		res := call(t, sess, "copy_in", map[string]any{"sandbox_id": id, "host_path": p, "dest_path": "/workspace/got-" + filepath.Base(p)})
		refused(t, res, "copy_in "+p, "read_deny")
	}
	// The whole project: copied, without the key's other names' content.
	mustOK(t, call(t, sess, "copy_in", map[string]any{"sandbox_id": id, "host_path": "~/proj", "dest_path": "/workspace/proj"}), "copy_in ~/proj")
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "cat /workspace/proj/main.py; grep -rl SECRET /workspace || echo clean"})
	if out := text(res); !strings.Contains(out, "hello") || !strings.Contains(out, "clean") {
		t.Errorf("after copy_in ~/proj: %s", out)
	}
}

// copy_out with write_root = "~": MCP Sandbox's own config (the live one),
// a shell start-up file, authorized_keys (also through a bind-mounted
// second name of ~/.ssh), an autostart entry, a LaunchAgent and a client
// config are refused, every byte unchanged. Before the fix each was
// overwritten, and the server reloaded the sandbox's config.
func TestAttackWriteDenyHome(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	attackWriteDenyHome(t, serverEnv)
}

func attackWriteDenyHome(t *testing.T, env backendEnv) {
	h := newIdentityHome(t, env, "[files]\nread_roots = [\"~\"]\nwrite_root = \"~\"\n")
	sess := sdkClient(t, startServer(t, h.env), nil)
	id := createWith(t, sess, nil)
	mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "evil", "content": "[files]\nread_deny_replace = true\nread_deny = []\n# pwned\n"}), "write_file")
	targets := []string{".config/mcp-sandbox/config.toml", ".bashrc", ".ssh/authorized_keys", ".config/autostart/app.desktop",
		".config/autostart/new.desktop", ".cursor/mcp.json", "Library/LaunchAgents/com.me.app.plist", ".profile", ".config"}
	if err := unix.Mount(filepath.Join(h.home, ".ssh"), filepath.Join(h.home, "proj"), "", unix.MS_BIND, ""); err == nil {
		t.Cleanup(func() { unix.Unmount(filepath.Join(h.home, "proj"), unix.MNT_DETACH) })
		targets = append(targets, "proj/authorized_keys")
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("mount --bind: %v", err)
	}
	before := h.hashes(t)
	for _, p := range targets {
		res := call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": "evil", "host_path": p, "overwrite": true})
		refused(t, res, "copy_out to ~/"+p, "write_deny")
	}
	after := h.hashes(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("~/%s changed", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("~/%s was created", k)
		}
	}
	// copy_in of the config is refused too, and copy_out elsewhere works.
	refused(t, call(t, sess, "copy_in", map[string]any{"sandbox_id": id, "host_path": h.config}), "copy_in of the config", "read_deny")
	mustOK(t, call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": "evil", "host_path": "Downloads/evil.txt"}), "copy_out to ~/Downloads")
}
