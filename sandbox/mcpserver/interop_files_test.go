package mcpserver_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

func tinyPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFileToolsOverMCP drives the file and copy tools of the real binary
// with the official SDK client, hostile inputs included, and checks the
// host disk.
func TestFileToolsOverMCP(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	home := t.TempDir()
	proj := filepath.Join(home, "src", "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "data.txt"), []byte("from the host\n"), 0o644)
	secret := filepath.Join(home, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o600)
	out := filepath.Join(home, "out")
	p := startServer(t, serverEnv(t, "[files]\nread_roots = [\""+filepath.Join(home, "src")+"\"]\nwrite_root = \""+out+"\"\nmax_copy_mb = 5\n"))
	sess := sdkClient(t, p, nil)
	id := createSandboxes(t, sess, 1)[0]

	res := call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "hello.txt", "content": "hi there"})
	if res.IsError {
		t.Fatalf("write_file: %s", text(res))
	}
	res = call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": "hello.txt"})
	var rf struct {
		Path, Content, Encoding string
		Size                    int64
		Truncated               bool
	}
	structured(t, res, &rf)
	if rf.Content != "hi there" || rf.Encoding != "utf-8" || rf.Size != 8 || rf.Path != "/workspace/hello.txt" {
		t.Errorf("read_file: %+v", rf)
	}
	pngData := tinyPNG(t)
	call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "fig.png", "content": base64.StdEncoding.EncodeToString(pngData), "encoding": "base64"})
	res = call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": "fig.png"})
	var gotImage bool
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok && ic.MIMEType == "image/png" && bytes.Equal(ic.Data, pngData) {
			gotImage = true
		}
	}
	if !gotImage {
		t.Errorf("read_file of a PNG did not return the image: %+v", res.Content)
	}
	res = call(t, sess, "list_files", map[string]any{"sandbox_id": id})
	if res.IsError || !strings.Contains(text(res), "/workspace/hello.txt") || !strings.Contains(text(res), "/workspace/fig.png") {
		t.Errorf("list_files: %s", text(res))
	}

	res = call(t, sess, "copy_in", map[string]any{"sandbox_id": id, "host_path": proj})
	if res.IsError || !strings.Contains(text(res), "/workspace/proj") {
		t.Fatalf("copy_in: %s", text(res))
	}
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "cat proj/data.txt && mkdir -p results && echo 42 > results/answer.txt"})
	if !strings.Contains(text(res), "from the host") {
		t.Errorf("copied file in the sandbox: %s", text(res))
	}
	res = call(t, sess, "copy_out", map[string]any{"sandbox_id": id, "path": "results"})
	if res.IsError {
		t.Fatalf("copy_out: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(out, id, "results", "answer.txt")); err != nil || string(b) != "42\n" {
		t.Errorf("on the host: %q %v", b, err)
	}

	call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "ln -s /etc/shadow shadow; ln -s /etc etc"})
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"read ../../etc/passwd", "read_file", map[string]any{"path": "../../etc/passwd"}, "outside /workspace"},
		{"read link to /etc/shadow", "read_file", map[string]any{"path": "shadow"}, "symlink"},
		{"read through a linked dir", "read_file", map[string]any{"path": "etc/shadow"}, "symlink"},
		{"write a newline name", "write_file", map[string]any{"path": "a\nb", "content": "x"}, "line break"},
		{"write bad base64", "write_file", map[string]any{"path": "x", "content": "!!!", "encoding": "base64"}, "base64"},
		{"copy_in outside the roots", "copy_in", map[string]any{"host_path": secret}, "read_roots"},
		{"copy_in /etc/passwd", "copy_in", map[string]any{"host_path": "/etc/passwd"}, "read_roots"},
		{"copy_out outside the root", "copy_out", map[string]any{"path": "hello.txt", "host_path": "../../escape.txt"}, "write_root"},
		{"copy_out a link to /etc/shadow", "copy_out", map[string]any{"path": "shadow"}, "symlink"},
		{"copy_out again without overwrite", "copy_out", map[string]any{"path": "results"}, "overwrite"},
		{"install an option", "install_packages", map[string]any{"packages": []string{"--extra-index-url=http://evil"}}, "not a valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["sandbox_id"] = id
			res := call(t, sess, tc.tool, tc.args)
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Errorf("want isError mentioning %q, got isError=%v %q", tc.want, res.IsError, text(res))
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Error("the secret changed")
	}
	if _, err := os.Stat(filepath.Join(home, "escape.txt")); err == nil {
		t.Error("copy_out escaped the write root")
	}
	// Still serving.
	if res := call(t, sess, "sandbox_list", nil); res.IsError {
		t.Errorf("server stopped serving: %s", text(res))
	}
}
