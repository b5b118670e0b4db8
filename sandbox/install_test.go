package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// packageIndex serves testenv.PackageIndex on the host's loopback: the
// install helper has no network of its own and reaches it only through
// its proxy, because install_env names it exactly.
func packageIndex(t *testing.T) (pipURL, npmURL, host string, downloads func(file string) int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pipURL, npmURL, downloads = testenv.PackageIndex(t, l, nil)
	return pipURL, npmURL, "127.0.0.1", downloads
}

// installEngine is an engine whose installers use the local package index;
// downloads counts the index's downloads of a wheel file.
func installEngine(t *testing.T, images ...string) (eng *sandbox.Engine, downloads func(file string) int) {
	t.Helper()
	testenv.Docker(t, images...)
	pipURL, npmURL, host, downloads := packageIndex(t)
	eng, _ = newEngine(t, func(c *config.Config) {
		c.Network.InstallEnv = map[string]string{
			"PIP_INDEX_URL": pipURL, "PIP_TRUSTED_HOST": host,
			"npm_config_registry": npmURL,
		}
	})
	return eng, downloads
}

// TestInstallPackages installs a wheel from a local index (no public index
// is reachable here) through the helper, imports it in the sandbox, and
// checks the sandbox still has no network interface but loopback.
func TestInstallPackages(t *testing.T) {
	eng, _ := installEngine(t, testenv.PythonImage, testenv.NodeImage)
	ctx := context.Background()

	py := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	res, err := eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{"mcpsbxdemo==1.0"}}, nil)
	if err != nil || res.ExitCode != 0 || res.Manager != "pip" || len(res.Installed) != 1 {
		t.Fatalf("pip install: %+v %v", res, err)
	}
	if len(res.Reached) != 1 || !strings.HasPrefix(res.Reached[0], "127.0.0.1:") {
		t.Errorf("pip install reached %q, want only the local index", res.Reached)
	}
	run, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: py.ID, Code: "import mcpsbxdemo\nprint(mcpsbxdemo.VALUE)"})
	if err != nil || run.Stdout != "42\n" {
		t.Fatalf("import after install: %+v %v", run, err)
	}
	if r := mustExec(t, eng, py.ID, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`); r.Stdout != "lo\n" {
		t.Errorf("the sandbox has interfaces besides lo: %q", r.Stdout)
	}

	js := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	res, err = eng.InstallPackages(ctx, js.ID, install.Request{Packages: []string{"mcpsbx-demo@1.0.0"}}, nil)
	if err != nil || res.ExitCode != 0 || res.Manager != "npm" {
		t.Fatalf("npm install: %+v %v", res, err)
	}
	run, err = eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: js.ID, Code: "console.log(require('mcpsbx-demo').value)"})
	if err != nil || run.Stdout != "43\n" {
		t.Fatalf("require after install: %+v %v", run, err)
	}

	// An unknown package is a normal result with a hint, not an error.
	res, err = eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{"no-such-package-xyz"}}, nil)
	if err != nil || res.ExitCode == 0 || !strings.Contains(res.Note, "has no such package") {
		t.Errorf("unknown package: %+v %v", res, err)
	}
}

// The installer has the network, so it must never run, or be configured
// by, anything the sandbox's own code wrote: a .pth file or a module in the
// user site, a pip or npm config file, a package.json with install scripts.
func TestInstallPackagesIgnoresPlantedFiles(t *testing.T) {
	eng, _ := installEngine(t, testenv.PythonImage, testenv.NodeImage)
	ctx := context.Background()
	// Each planted file, if the installer ran or read it, leaves a file
	// named pwned-* in the shared places it could reach.
	py := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	plant := testenv.PipTraps()
	if r, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: py.ID, Code: plant}); err != nil || r.ExitCode != 0 {
		t.Fatalf("plant: %+v %v", r, err)
	}
	res, err := eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{"mcpsbxdemo==1.0"}}, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("pip install: %+v %v", res, err)
	}
	// No python has started in the sandbox since the files were planted, so
	// a mark can only come from the installer. The sandbox's files stay.
	if r := mustExec(t, eng, py.ID, "ls -a /workspace | grep pwned; test -f /workspace/pip/__init__.py || echo lost; test -e /cache && echo the sandbox sees the helpers cache; ls /var/cache/mcp-sandbox-install >/dev/null 2>&1 && echo the sandbox reads the install cache; touch /var/cache/mcp-sandbox-install/x 2>/dev/null && echo the sandbox writes the install cache"); r.Stdout != "" {
		t.Errorf("after pip install: %q %q", r.Stdout, r.Stderr)
	}
	if r := mustRun(t, eng, py.ID, "import mcpsbxdemo; print(mcpsbxdemo.VALUE)"); r.Stdout != "42\n" {
		t.Errorf("import after install: %+v", r)
	}

	js := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	pkg := `{"name": "w", "version": "1.0.0", "scripts": {"preinstall": "touch /workspace/pwned-preinstall /tmp/pwned-preinstall", "postinstall": "touch /workspace/pwned-postinstall"}}`
	npmrc := "logs-dir=/workspace/pwned-npmrc\nscript-shell=/workspace/evil.sh\n"
	evil := "#!/bin/sh\ntouch /workspace/pwned-shell\n"
	if r := mustExec(t, eng, js.ID, fmt.Sprintf("printf %%s %s > package.json && printf %%s %s > .npmrc && printf %%s %s > evil.sh && chmod +x evil.sh",
		shellQuote(pkg), shellQuote(npmrc), shellQuote(evil))); r.ExitCode != 0 {
		t.Fatalf("plant: %+v", r)
	}
	res, err = eng.InstallPackages(ctx, js.ID, install.Request{Packages: []string{"mcpsbx-demo@1.0.0"}}, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("npm install: %+v %v", res, err)
	}
	if r := mustExec(t, eng, js.ID, "ls -a /workspace | grep pwned; test -f /workspace/evil.sh || echo lost"); r.Stdout != "" {
		t.Errorf("the installer ran or read the sandbox's files: %q", r.Stdout)
	}
	if r := mustRun(t, eng, js.ID, "console.log(require('mcpsbx-demo').value)"); r.Stdout != "43\n" {
		t.Errorf("require after install: %+v", r)
	}
}

// Each install leaves one coherent set: a later version replaces an
// earlier one whole, and earlier packages stay importable.
func TestInstallPackagesReplacesVersions(t *testing.T) {
	eng, downloads := installEngine(t, testenv.PythonImage)
	ctx := context.Background()
	py := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	for _, spec := range []string{"mcpsbxdemo==1.0", "mcpsbxdemo==2.0", "mcpsbxtwo"} {
		if res, err := eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{spec}}, nil); err != nil || res.ExitCode != 0 {
			t.Fatalf("install %s: %+v %v", spec, res, err)
		}
	}
	code := "import importlib.metadata as m, mcpsbxdemo, mcpsbxtwo, site, os\n" +
		"print(mcpsbxdemo.VALUE, mcpsbxtwo.VALUE, m.version('mcpsbxdemo'))\n" +
		"print(sorted(n for n in os.listdir(site.getusersitepackages()) if n.startswith('mcpsbx')))"
	want := "2 two 2.0\n['mcpsbxdemo', 'mcpsbxdemo-2.0.dist-info', 'mcpsbxtwo', 'mcpsbxtwo-1.0.dist-info']\n"
	if r := mustRun(t, eng, py.ID, code); r.Stdout != want {
		t.Errorf("after three installs:\n got %q\nwant %q (stderr %q)", r.Stdout, want, r.Stderr)
	}
	// Installed again each time, but downloaded once: the sandbox's
	// helpers share a download cache.
	if n := downloads("mcpsbxdemo-2.0-py3-none-any.whl"); n != 1 {
		t.Errorf("mcpsbxdemo 2.0 downloaded %d times, want once", n)
	}
	// A failed install changes nothing.
	if res, err := eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{"no-such-package-xyz"}}, nil); err != nil || res.ExitCode == 0 {
		t.Fatalf("unknown package: %+v %v", res, err)
	}
	if r := mustRun(t, eng, py.ID, code); r.Stdout != want {
		t.Errorf("after a failed install:\n got %q\nwant %q", r.Stdout, want)
	}
}

func mustRun(t *testing.T, eng *sandbox.Engine, id, code string) sandbox.RunCodeResult {
	t.Helper()
	r, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: id, Code: code})
	if err != nil {
		t.Fatalf("run_code: %v", err)
	}
	return r
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestInstallPackagesRefused(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  install.Request
	}{
		{"option smuggled as a name", install.Request{Packages: []string{"--extra-index-url=http://evil"}}},
		{"short option", install.Request{Packages: []string{"-i", "http://evil"}}},
		{"shell metacharacters", install.Request{Packages: []string{"numpy; rm -rf /"}}},
		{"url", install.Request{Packages: []string{"git+https://evil/x.git"}}},
		{"path", install.Request{Packages: []string{"../x"}}},
		{"local wheel", install.Request{Packages: []string{"evil-1.0-py3-none-any.whl"}}},
		{"local npm tarball", install.Request{Manager: "npm", Packages: []string{"evil.TGZ"}}},
		{"github shorthand", install.Request{Manager: "npm", Packages: []string{"user/repo"}}},
		{"newline", install.Request{Packages: []string{"numpy\nrequests"}}},
		{"empty", install.Request{Packages: nil}},
		{"npm option", install.Request{Manager: "npm", Packages: []string{"--registry=http://evil"}}},
		{"unknown manager", install.Request{Manager: "apt", Packages: []string{"curl"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := eng.InstallPackages(ctx, sb.ID, tc.req, nil); !errors.Is(err, sandbox.ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	off, _ := newEngine(t, func(c *config.Config) { c.Network.Install = false })
	sb2 := mustCreate(t, off, sandbox.CreateRequest{Language: "python"})
	_, err := off.InstallPackages(ctx, sb2.ID, install.Request{Packages: []string{"requests"}}, nil)
	if !errors.Is(err, sandbox.ErrPolicy) || !strings.Contains(err.Error(), "network.install") {
		t.Errorf("installs off: %v", err)
	}
}

// The installed files reach the sandbox with the sandbox user's rights
// (its own tar), never through the engine's archive API, which writes as
// root: while installs run, a process in the sandbox keeps swapping
// /workspace/.local between a directory and a link to /usr/local, a place
// of the image only root may write. Nothing may land there, whatever the
// install's outcome. Each round reinstalls, so each copies the whole tree
// again. First, deterministically: a directory the sandbox made
// read-only for itself is not written into.
func TestInstallPackagesRacingLinkSwap(t *testing.T) {
	eng, _ := installEngine(t, testenv.PythonImage)
	ctx := context.Background()
	py := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	if r := mustExec(t, eng, py.ID, "touch /usr/local/x 2>/dev/null && echo writable"); r.Stdout != "" {
		t.Fatalf("the sandbox user can write /usr/local itself; the test means nothing")
	}
	// With the sandbox user's rights, a directory the sandbox made
	// read-only for itself stays as it is; a root-side write ignores that.
	if r := mustExec(t, eng, py.ID, "mkdir -m 0500 /workspace/.local"); r.ExitCode != 0 {
		t.Fatalf("mkdir: %+v", r)
	}
	res, err := eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{"mcpsbxdemo==1.0"}}, nil)
	t.Logf("into a read-only .local: exit %d, err %v", res.ExitCode, err)
	if r := mustExec(t, eng, py.ID, "ls -A /workspace/.local; chmod 0755 /workspace/.local"); r.Stdout != "" {
		t.Errorf("install_packages wrote past the sandbox user's rights (into a directory it cannot write): %q", r.Stdout)
	}
	const list = "find /usr/local -xdev 2>/dev/null | sort"
	before := mustExec(t, eng, py.ID, list).Stdout
	swap := "cd /workspace && (while :; do rm -rf .local; ln -s /usr/local .local; rm -f .local; mkdir .local; " +
		"rm -rf .local; ln -s /usr/local .local; done) >/dev/null 2>&1 & echo started"
	if r := mustExec(t, eng, py.ID, swap); !strings.Contains(r.Stdout, "started") {
		t.Fatalf("swapper: %+v", r)
	}
	for i := range 4 {
		spec := []string{"mcpsbxdemo==2.0", "mcpsbxdemo==1.0"}[i%2]
		res, err := eng.InstallPackages(ctx, py.ID, install.Request{Packages: []string{spec}}, nil)
		t.Logf("round %d: exit %d, err %v", i, res.ExitCode, err)
	}
	if after := mustExec(t, eng, py.ID, list).Stdout; after != before {
		t.Errorf("install_packages wrote outside the workspace through a swapped link:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
