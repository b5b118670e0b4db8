package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// commandNames are every subcommand the binary has.
var commandNames = []string{"bench", "clients", "doctor", "ps", "run", "serve", "stop", "version"}

// singleDashFlag finds a flag shown the Go way (-json) instead of --json
// at the start of a usage line.
var singleDashFlag = regexp.MustCompile(`(?m)^\s+-[a-z]`)

// TestHelpConventions: asking for help (CMD --help, CMD -h, help CMD)
// prints the usage to stdout and exits 0, as docker and kubectl do, with
// flags written --flag; a bad flag prints it to stderr and exits 2 (run:
// 125, its own failures' code).
func TestHelpConventions(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	_, env := e2eHome(t)
	for _, name := range commandNames {
		for _, tc := range []struct {
			how  string
			args []string
		}{
			{"--help", []string{name, "--help"}},
			{"-h", []string{name, "-h"}},
			{"help CMD", []string{"help", name}},
		} {
			t.Run(name+"/"+tc.how, func(t *testing.T) {
				code, out, errOut := clitest.Run(t, bin, env, tc.args...)
				if code != 0 {
					t.Errorf("exit %d, want 0", code)
				}
				if !strings.HasPrefix(out, "Usage: mcp-sandbox "+name+" ") {
					t.Errorf("stdout does not start with the usage:\n%s", out)
				}
				if errOut != "" {
					t.Errorf("stderr not empty: %q", errOut)
				}
				if m := singleDashFlag.FindString(out); m != "" {
					t.Errorf("a flag is shown with one dash (%q):\n%s", m, out)
				}
			})
		}
		t.Run(name+"/bad flag", func(t *testing.T) {
			want := 2
			if name == "run" {
				want = exitRunFailed
			}
			code, out, errOut := clitest.Run(t, bin, env, name, "--no-such-flag")
			if code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			if out != "" || !strings.Contains(errOut, "Usage: mcp-sandbox "+name+" ") || !strings.Contains(errOut, "--no-such-flag") {
				t.Errorf("want the error and usage on stderr only; stdout %q, stderr %q", out, errOut)
			}
		})
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, errOut := clitest.Run(t, bin, env, args...)
		if code != 0 || !strings.Contains(out, "Commands:") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := clitest.Run(t, bin, env, "help", "nonsense"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("help nonsense: exit %d, stderr %q", code, errOut)
	}
}

// TestRunExitCodes: run passes the program's exit code through, and uses
// docker run's codes for its own failures (125) and for a program that
// cannot be invoked (126) or whose interpreter is missing (127).
func TestRunExitCodes(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	extra := "[languages.ruby]\nimage = \"" + testenv.PythonImage + "\"\nrun = [\"ruby\", \"{file}\"]\nextension = \".rb\"\n" +
		"[languages.noexec]\nimage = \"" + testenv.PythonImage + "\"\nrun = [\"/etc/hostname\", \"{file}\"]\nextension = \".nx\"\n"
	cfg := filepath.Join(home, ".config", "mcp-sandbox", "config.toml")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(old, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	file := func(name, content string) string {
		p := filepath.Join(home, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// An engine named explicitly is used or the run fails (no fallback).
	noEngine := file("no-engine.toml", string(old)+"[docker]\nhost = \"unix://"+filepath.Join(home, "no-docker.sock")+"\"\n")
	exit7 := file("exit7.py", "import sys\nsys.exit(7)\n")
	ok := file("ok.py", "print('ok')\n")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want int
	}{
		{"program's own code", nil, []string{exit7}, 7},
		{"success", nil, []string{ok}, 0},
		{"timeout as a duration", nil, []string{"--timeout", "30s", ok}, 0},
		{"timeout as plain seconds", nil, []string{"--timeout", "30", ok}, 0},
		{"bad timeout", nil, []string{"--timeout", "soon", ok}, exitRunFailed},
		{"no file given", nil, nil, exitRunFailed},
		{"file missing", nil, []string{filepath.Join(home, "absent.py")}, exitRunFailed},
		{"unknown language", nil, []string{"--lang", "cobol", ok}, exitRunFailed},
		{"timeout above the policy", nil, []string{"--timeout", "1h", ok}, exitRunFailed},
		{"engine unreachable", []string{"MCP_SANDBOX_CONFIG=" + noEngine}, []string{ok}, exitRunFailed},
		{"interpreter not found", nil, []string{file("a.rb", "puts 1\n")}, 127},
		{"program cannot be invoked", nil, []string{file("a.nx", "x\n")}, 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := clitest.Run(t, bin, append(env[:len(env):len(env)], tc.env...), append([]string{"run"}, tc.args...)...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.want, out, errOut)
			}
		})
	}
}

// TestServeConfigFlag: serve --config wins over MCP_SANDBOX_CONFIG. The
// server logs the file it uses when it starts; with stdin closed it stops
// at once.
func TestServeConfigFlag(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	home, env := e2eHome(t)
	fromEnv := filepath.Join(home, "env.toml")
	fromFlag := filepath.Join(home, "flag.toml")
	for _, p := range []string{fromEnv, fromFlag} {
		if err := os.WriteFile(p, []byte("[pool]\nsize = 0\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env = append(env, "MCP_SANDBOX_CONFIG="+fromEnv, "DOCKER_HOST=unix://"+filepath.Join(home, "no-docker.sock"))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"flag wins", []string{"serve", "--config", fromFlag}, fromFlag},
		{"environment without the flag", []string{"serve"}, fromEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := clitest.Run(t, bin, env, tc.args...)
			if code != 0 {
				t.Errorf("exit %d\n%s", code, errOut)
			}
			if out != "" {
				t.Errorf("stdout belongs to MCP, got %q", out)
			}
			if !strings.Contains(errOut, "config="+tc.want) {
				t.Errorf("the server did not use %s:\n%s", tc.want, errOut)
			}
		})
	}
}

// TestReadmeSynopsis: the command-line synopsis of sandbox/README.md is
// the program's own, command by command.
func TestReadmeSynopsis(t *testing.T) {
	bin := clitest.Binary(t, "mcp-sandbox")
	_, env := e2eHome(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "sandbox", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Command line and packaging (contract)\n\n```\n")
	if !ok {
		t.Fatal("sandbox/README.md has no Command line section with a code block")
	}
	block, _, _ = strings.Cut(block, "```")
	documented := map[string]string{}
	for _, line := range strings.Split(block, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "mcp-sandbox" {
			documented[f[1]] = line
		}
	}
	for _, name := range commandNames {
		_, out, _ := clitest.Run(t, bin, env, name, "--help")
		usage, _, _ := strings.Cut(out, "\n")
		want := strings.TrimPrefix(usage, "Usage: ")
		if got := documented[name]; got != want {
			t.Errorf("sandbox/README.md says\n\t%s\nthe program says\n\t%s", got, want)
		}
	}
}
