package hostcopy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// MCP Sandbox's own config and state are refused by both copy tools even
// when the user's lists replace the defaults with nothing.
func TestFenceKeepsOwnPathsWhateverTheLists(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("MCP_SANDBOX_CONFIG", "")
	t.Setenv("MCP_SANDBOX_STATE_DIR", filepath.Join(home, "state"))
	cfgPath := config.Path()
	// The tray's answers too: an AI that could write one there would
	// answer its own question (state.AsksDir).
	asks := filepath.Join(home, "state", "asks")
	answer := filepath.Join(asks, "0123456789abcdef0123456789abcdef.answer.json")
	for _, p := range []string{cfgPath, filepath.Join(home, "state", "http.token"), filepath.Join(asks, "listener.lock")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("SECRET"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Parse(cfgPath, []byte("[files]\nread_roots = [\"~\"]\nwrite_root = \"~\"\nread_deny_replace = true\nread_deny = []\nwrite_deny_replace = true\nwrite_deny = []\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := Fence(cfg)
	for _, p := range []string{cfgPath, filepath.Dir(cfgPath), filepath.Join(home, "state", "http.token"), asks, answer} {
		if _, err := f.ReadPath(p); !errors.Is(err, hostfs.ErrFence) {
			t.Errorf("copy_in of %s: %v; want a refusal", p, err)
		}
		root, dest, err := f.WritePath(p, "")
		if err == nil {
			_, err = f.Unpack(context.Background(), bytes.NewReader(DirsTar(1000, 1000, "x").Bytes()), root, dest, hostfs.UnpackOptions{Overwrite: true})
		}
		if !errors.Is(err, hostfs.ErrFence) {
			t.Errorf("copy_out to %s: %v; want a refusal", p, err)
		}
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != "SECRET" {
		t.Error("the config changed")
	}
	if _, err := os.Lstat(answer); err == nil {
		t.Error("copy_out wrote an answer in the asks folder")
	}
}

// TestFenceKeepsEngineCredentials: the kubeconfig the backend reads and the
// Docker client's certificates are refused in both directions wherever
// they are kept, even with the deny lists emptied (a sandbox given them
// would hold the keys to the cluster that runs it).
func TestFenceKeepsEngineCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("MCP_SANDBOX_CONFIG", "")
	t.Setenv("MCP_SANDBOX_STATE_DIR", filepath.Join(home, "state"))
	kcA := filepath.Join(home, "work", "prod.kubeconfig")
	kcB := filepath.Join(home, "work", "other", "dev.yaml")
	kcCfg := filepath.Join(home, "clusters", "named-in-config")
	certs := filepath.Join(home, "certs", "docker")
	dockerCfg := filepath.Join(home, "dockercfg")
	t.Setenv("KUBECONFIG", kcA+string(filepath.ListSeparator)+kcB)
	t.Setenv("DOCKER_CERT_PATH", certs)
	t.Setenv("DOCKER_CONFIG", dockerCfg)
	for _, p := range []string{kcA, kcB, kcCfg, filepath.Join(certs, "key.pem"), filepath.Join(dockerCfg, "config.json")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("SECRET"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Parse(config.Path(), []byte("[files]\nread_roots = [\"~\"]\nwrite_root = \"~\"\nread_deny_replace = true\nread_deny = []\nwrite_deny_replace = true\nwrite_deny = []\n[kubernetes]\nkubeconfig = \"~/clusters/named-in-config\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := Fence(cfg)
	for _, p := range []string{kcA, kcB, kcCfg, certs, filepath.Join(certs, "key.pem"), dockerCfg} {
		if _, err := f.ReadPath(p); !errors.Is(err, hostfs.ErrFence) {
			t.Errorf("copy_in of %s: %v; want a refusal", p, err)
		}
		root, dest, err := f.WritePath(p, "")
		if err == nil {
			_, err = f.Unpack(context.Background(), bytes.NewReader(DirsTar(1000, 1000, "x").Bytes()), root, dest, hostfs.UnpackOptions{Overwrite: true})
		}
		if !errors.Is(err, hostfs.ErrFence) {
			t.Errorf("copy_out to %s: %v; want a refusal", p, err)
		}
	}
	// A file beside them is still readable: the fence names these, not
	// their folders.
	beside := filepath.Join(home, "work", "notes.txt")
	if err := os.WriteFile(beside, []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadPath(beside); err != nil {
		t.Errorf("copy_in of %s: %v; want it allowed", beside, err)
	}
}
