package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// e2eHome is a temporary home with a config that uses the test images.
func e2eHome(t *testing.T) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	cfgDir := filepath.Join(home, ".config", "mcp-sandbox")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[images]\npython = \"" + testenv.PythonImage + "\"\njavascript = \"" + testenv.NodeImage + "\"\nbash = \"" + testenv.PythonImage + "\"\npull = \"never\"\n[pool]\nsize = 0\n"
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(testenv.WithRuntime(cfg)), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=", "XDG_STATE_HOME="}
}

// TestClaudeInstallVerifyEndToEnd: `clients install --client claude` then
// `clients verify --client claude`, in a temporary home, with the real
// binary and the real engine.
func TestClaudeInstallVerifyEndToEnd(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	// Claude Desktop "is installed": its config directory exists.
	if err := os.MkdirAll(filepath.Join(home, ".config", "Claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := clitest.Run(t, bin, env, "clients", "install", "--client", "claude")
	if code != 0 {
		t.Fatalf("install: %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("config %s: %v", data, err)
	}
	entry := cfg.MCPServers["mcp-sandbox"]
	if entry.Command != bin || strings.Join(entry.Args, " ") != "serve" {
		t.Errorf("entry = %+v, want %s serve", entry, bin)
	}
	code, out, errOut = clitest.Run(t, bin, env, "clients", "verify", "--client", "claude")
	if code != 0 || !strings.Contains(out+errOut, "mcp-sandbox") {
		t.Fatalf("verify: %d\n%s%s", code, out, errOut)
	}
	t.Logf("verify: %s", strings.TrimSpace(out))
}

// TestDoctorJSON checks the doctor's contract on this machine: the real
// engine is chosen, and the report has the keys outside tools rely on.
func TestDoctorJSON(t *testing.T) {
	testenv.Docker(t)
	bin := clitest.Binary(t, "mcp-sandbox")
	_, env := e2eHome(t)
	code, out, errOut := clitest.Run(t, bin, env, "doctor", "--json")
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
	}
	var r struct {
		Docker struct {
			Chosen *struct {
				Host    string `json:"host"`
				Engine  string `json:"engine"`
				Version string `json:"version"`
			} `json:"chosen"`
			Candidates []struct {
				Host   string  `json:"host"`
				Source string  `json:"source"`
				OK     bool    `json:"ok"`
				Error  *string `json:"error"`
			} `json:"candidates"`
		} `json:"docker"`
		Clients []struct {
			Name       string `json:"name"`
			Installed  bool   `json:"installed"`
			Configured bool   `json:"configured"`
			Path       string `json:"path"`
		} `json:"clients"`
		Config struct {
			Path  string `json:"path"`
			Valid bool   `json:"valid"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if r.Docker.Chosen == nil || r.Docker.Chosen.Host == "" || r.Docker.Chosen.Version == "" {
		t.Errorf("docker.chosen = %+v", r.Docker.Chosen)
	}
	if len(r.Docker.Candidates) == 0 || len(r.Clients) != 9 || !r.Config.Valid || r.Config.Path == "" {
		t.Errorf("report: %s", out)
	}
}

// TestDoctorInvalidConfig: an invalid config file makes the doctor fail and
// name the line.
func TestDoctorInvalidConfig(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	p := filepath.Join(home, ".config", "mcp-sandbox", "config.toml")
	if err := os.WriteFile(p, []byte("[limits]\nmemory_mb = 512\ncpus = \"lots\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := clitest.Run(t, bin, env, "doctor", "--json")
	if code == 0 {
		t.Fatal("doctor succeeded with an invalid config")
	}
	var r struct {
		Config struct {
			Valid bool   `json:"valid"`
			Error string `json:"error"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Config.Valid || !strings.Contains(r.Config.Error, "config.toml:3") {
		t.Errorf("config = %+v, want invalid naming line 3", r.Config)
	}
}

// TestVersion covers the version command.
func TestVersion(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	_, env := e2eHome(t)
	code, out, _ := clitest.Run(t, bin, env, "version")
	if code != 0 || !strings.HasPrefix(out, "mcp-sandbox ") {
		t.Errorf("version: %d %q", code, out)
	}
	if code, _, _ := clitest.Run(t, bin, env, "nonsense"); code != 2 {
		t.Errorf("unknown command exit = %d, want 2", code)
	}
}

// TestRunPsStop covers run (exit code passed through), ps and stop with
// the real engine.
func TestRunPsStop(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	f := filepath.Join(home, "prog.py")
	os.WriteFile(f, []byte("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(7)\n"), 0o600)
	code, out, errOut := clitest.Run(t, bin, env, "run", f)
	if code != 7 || out != "out\n" || !strings.Contains(errOut, "err") {
		t.Errorf("run: %d %q %q", code, out, errOut)
	}
	code, out, _ = clitest.Run(t, bin, env, "ps", "--json")
	if code != 0 || !strings.Contains(out, `"sandboxes"`) {
		t.Errorf("ps: %d %s", code, out)
	}
	if code, _, errOut := clitest.Run(t, bin, env, "stop", "nosuchbox1"); code != 1 || !strings.Contains(errOut, "no managed sandbox") {
		t.Errorf("stop unknown: %d %s", code, errOut)
	}
}

// TestServeReturnsHeapWhenIdle: the real server, once quiet after start-up,
// hands its free heap back to the system (sandbox/memtrim, wired in serve)
// and says so in its debug log. No engine is needed for that.
func TestServeReturnsHeapWhenIdle(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	env = append(env, "DOCKER_HOST=unix://"+filepath.Join(home, "no-engine.sock"))
	cmd := exec.Command(bin, "serve", "--debug")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &clitest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve exited with %v after stdin closed", err)
		}
	}()
	t.Log(stderr.WaitLine(t, `msg="idle: free heap returned to the system"`, 30*time.Second))
}
