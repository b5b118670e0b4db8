package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fakeDockerHost marks a run of this test binary as the server a client
// config points at: `clients install --docker-host` writes it into the
// entry's env, and `clients verify` starts the binary with "serve" and that
// environment. (An init function rather than TestMain, so that other
// commands' tests in this package keep their own.)
const fakeDockerHost = "unix:///clients-test/fake-mcp-server.sock"

func init() {
	if len(os.Args) == 2 && os.Args[1] == "serve" && os.Getenv("DOCKER_HOST") == fakeDockerHost {
		s := server.NewMCPServer("fake-sandbox", "0.0.1")
		s.AddTool(mcpgo.NewTool("run_code"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("ok"), nil
		})
		_ = server.ServeStdio(s)
		os.Exit(0)
	}
}

// clientsHome is a fresh home directory where Cursor has been run.
func clientsHome(t *testing.T) (home string, env map[string]string) {
	t.Helper()
	home = t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	old := serverExecutable
	serverExecutable = func() (string, error) { return exe, nil }
	t.Cleanup(func() { serverExecutable = old })
	return home, map[string]string{"HOME": home, "PATH": t.TempDir()}
}

func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code = Run(context.Background(), e, append([]string{"clients"}, args...))
	return code, out.String(), errb.String()
}

func TestClientsUsage(t *testing.T) {
	_, env := clientsHome(t)
	tests := []struct {
		args []string
		say  string
	}{
		{[]string{"install"}, "needs --client NAME or --all"},
		{[]string{"verify"}, "needs --client NAME or --all"},
		{[]string{"install", "--client", "notepad"}, `unknown client "notepad"`},
		{[]string{"install", "--client", "cursor", "--all"}, "not both"},
		{[]string{"frobnicate", "--all"}, `unknown subcommand "frobnicate"`},
		{[]string{"install", "--client", "cursor", "extra"}, `unexpected argument "extra"`},
		{[]string{"--no-such-flag"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, env, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.say) {
			t.Errorf("clients %v = %d, %q; want 2 and %q", tt.args, code, stderr, tt.say)
		}
	}
	if code, _, _ := runCLI(t, env, "--help"); code != 0 {
		t.Errorf("clients --help = %d, want 0", code)
	}
}

func TestClientsInstallVerifyUninstall(t *testing.T) {
	home, env := clientsHome(t)
	config := filepath.Join(home, ".cursor", "mcp.json")
	exe, _ := serverExecutable()

	// A dry run shows the diff and writes nothing.
	code, out, stderr := runCLI(t, env, "install", "--client", "cursor", "--docker-host", fakeDockerHost, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "--- /dev/null\n+++ "+config) || !strings.Contains(out, `+      "command": `) {
		t.Fatalf("dry run = %d, %q, %q", code, out, stderr)
	}
	if _, err := os.Stat(config); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run wrote %s", config)
	}

	code, out, stderr = runCLI(t, env, "install", "--client", "cursor", "--docker-host", fakeDockerHost)
	if code != 0 || !strings.Contains(out, "cursor: configured "+config) {
		t.Fatalf("install = %d, %q, %q", code, out, stderr)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	b, _ := os.ReadFile(config)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.MCPServers["mcp-sandbox"]; got.Command != exe || strings.Join(got.Args, " ") != "serve" || got.Env["DOCKER_HOST"] != fakeDockerHost {
		t.Errorf("entry = %+v", got)
	}

	code, out, _ = runCLI(t, env, "install", "--client", "cursor", "--docker-host", fakeDockerHost)
	if code != 0 || !strings.Contains(out, "already configured") {
		t.Errorf("second install = %d, %q", code, out)
	}

	code, out, stderr = runCLI(t, env, "list", "--docker-host", fakeDockerHost)
	if code != 0 || !strings.Contains(out, "cursor") || !strings.Contains(out, "yes        yes         yes") {
		t.Errorf("list = %d, %q, %q", code, out, stderr)
	}

	code, out, stderr = runCLI(t, env, "verify", "--client", "cursor", "--timeout", "20s")
	if code != 0 || !strings.Contains(out, "cursor: ok, fake-sandbox 0.0.1") || !strings.Contains(out, "1 tools") {
		t.Errorf("verify = %d, %q, %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, env, "verify", "--all", "--json")
	var verified struct {
		Clients []struct {
			Client string
			OK     bool
			Tools  int
		}
	}
	if err := json.Unmarshal([]byte(out), &verified); code != 0 || err != nil || len(verified.Clients) != 1 || !verified.Clients[0].OK || verified.Clients[0].Tools != 1 {
		t.Errorf("verify --all --json = %d, %q (%v)", code, out, err)
	}

	code, out, _ = runCLI(t, env, "uninstall", "--client", "cursor")
	if code != 0 || !strings.Contains(out, "cursor: removed the entry from "+config) {
		t.Errorf("uninstall = %d, %q", code, out)
	}
	if b, _ := os.ReadFile(config); strings.Contains(string(b), "mcp-sandbox") {
		t.Errorf("entry still there:\n%s", b)
	}
	code, _, stderr = runCLI(t, env, "verify", "--client", "cursor")
	if code != 1 || !strings.Contains(stderr, "no mcp-sandbox entry") {
		t.Errorf("verify after uninstall = %d, %q", code, stderr)
	}
}

func TestClientsInstallAll(t *testing.T) {
	home, env := clientsHome(t)
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	env["DOCKER_HOST"] = "unix:///from/env.sock" // what detectDockerHost finds by default
	code, out, stderr := runCLI(t, env, "install", "--all", "--json")
	if code != 0 {
		t.Fatalf("install --all = %d, %q, %q", code, out, stderr)
	}
	var res struct {
		Clients []struct {
			Client, Skipped, Path string
			Written               bool
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var written, skipped []string
	for _, c := range res.Clients {
		if c.Written {
			written = append(written, c.Client)
		}
		if c.Skipped != "" {
			skipped = append(skipped, c.Client)
		}
	}
	if fmt.Sprint(written) != "[cursor codex]" || len(skipped) != 7 {
		t.Errorf("written %v, skipped %v", written, skipped)
	}
	b, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if !strings.Contains(string(b), `env = { DOCKER_HOST = "unix:///from/env.sock" }`) {
		t.Errorf("codex config:\n%s", b)
	}
}

func TestClientsFailures(t *testing.T) {
	home, env := clientsHome(t)

	// A client that is not installed needs --force.
	code, _, stderr := runCLI(t, env, "install", "--client", "claude")
	if code != 1 || !strings.Contains(stderr, "does not look installed") || !strings.Contains(stderr, "--force") {
		t.Errorf("install into a missing client = %d, %q", code, stderr)
	}
	if code, _, stderr = runCLI(t, env, "install", "--client", "claude", "--force"); code != 0 {
		t.Errorf("install --force = %d, %q", code, stderr)
	}

	// A broken file is refused, left as it was, and the error says where.
	broken := []byte("{\n  \"theme\": \"x\",\n  \"mcpServers\": {,}\n}\n")
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".gemini", "settings.json")
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, env, "install", "--client", "gemini")
	if code != 1 || !strings.Contains(stderr, path+":3:") {
		t.Errorf("install into a broken file = %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, broken) {
		t.Errorf("broken file changed:\n%s", b)
	}
	code, out, _ := runCLI(t, env, "list")
	if code != 0 || !strings.Contains(out, "  gemini: "+path+":3:") {
		t.Errorf("list with a broken file = %d, %q", code, out)
	}

	// Without a server binary to point at, install fails clearly.
	serverExecutable = func() (string, error) { return "", errors.New("no mcp-sandbox beside /somewhere") }
	code, _, stderr = runCLI(t, env, "install", "--client", "cursor")
	if code != 1 || !strings.Contains(stderr, "no mcp-sandbox beside") {
		t.Errorf("install without a binary = %d, %q", code, stderr)
	}
}

// TestClientsUninstallIfCommand: what an uninstaller runs. Only entries
// that run its own program go (with a backup, and it says so); an entry the
// user pointed at another program stays as it was, and is reported.
func TestClientsUninstallIfCommand(t *testing.T) {
	home, env := clientsHome(t)
	exe, _ := serverExecutable()
	for _, dir := range []string{".codex", ".gemini"} {
		if err := os.MkdirAll(filepath.Join(home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link to this program: another name of the same file, which counts
	// (where links can be made).
	link := filepath.Join(t.TempDir(), "mcp-sandbox-link")
	if err := os.Symlink(exe, link); err != nil {
		t.Logf("no link (%v): --if-command names the program itself", err)
		link = exe
	}
	if code, out, stderr := runCLI(t, env, "install", "--all"); code != 0 {
		t.Fatalf("install --all = %d, %q, %q", code, out, stderr)
	}
	// The user points Gemini's entry at a program of their own.
	gemini := filepath.Join(home, ".gemini", "settings.json")
	other := "/opt/elsewhere/mcp-sandbox"
	var settings map[string]map[string]map[string]any
	b, err := os.ReadFile(gemini)
	if err == nil {
		err = json.Unmarshal(b, &settings)
	}
	if err != nil || settings["mcpServers"]["mcp-sandbox"]["command"] != exe {
		t.Fatalf("gemini config: %v\n%s", err, b)
	}
	settings["mcpServers"]["mcp-sandbox"]["command"] = other
	b, _ = json.MarshalIndent(settings, "", "  ")
	mine := string(b)
	if err := os.WriteFile(gemini, b, 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := runCLI(t, env, "uninstall", "--all", "--if-command", link)
	if code != 0 {
		t.Fatalf("uninstall --if-command = %d, %q, %q", code, out, stderr)
	}
	for _, want := range []string{
		"cursor: removed the entry from " + filepath.Join(home, ".cursor", "mcp.json") + ", backup ",
		"codex: removed the entry from " + filepath.Join(home, ".codex", "config.toml") + ", backup ",
		"gemini: left the mcp-sandbox entry in " + gemini + " as it is: it runs " + other,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{filepath.Join(home, ".cursor", "mcp.json"), filepath.Join(home, ".codex", "config.toml")} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "mcp-sandbox") {
			t.Errorf("entry still in %s:\n%s", f, b)
		}
	}
	if b, _ := os.ReadFile(gemini); string(b) != mine {
		t.Errorf("gemini's config changed:\n%s", b)
	}

	// --json names the kept entry; nothing is left to remove elsewhere.
	code, out, _ = runCLI(t, env, "uninstall", "--all", "--if-command", exe, "--json")
	var res struct {
		Clients []struct {
			Client  string
			Changed bool
			Kept    *struct{ Command string }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("--json = %d, %q (%v)", code, out, err)
	}
	for _, c := range res.Clients {
		if c.Changed || (c.Kept != nil) != (c.Client == "gemini") || (c.Kept != nil && c.Kept.Command != other) {
			t.Errorf("%+v", c)
		}
	}

	// Without --if-command, uninstall removes the user's entry too.
	if code, out, _ := runCLI(t, env, "uninstall", "--client", "gemini"); code != 0 || !strings.Contains(out, "gemini: removed the entry") {
		t.Errorf("plain uninstall = %d, %q", code, out)
	}
	for _, args := range [][]string{
		{"uninstall", "--all", "--if-command", "relative/mcp-sandbox"},
		{"install", "--all", "--if-command", exe},
	} {
		if code, _, stderr := runCLI(t, env, args...); code != 2 || !strings.Contains(stderr, "--if-command takes an absolute path") {
			t.Errorf("%v = %d, %q", args, code, stderr)
		}
	}
}
