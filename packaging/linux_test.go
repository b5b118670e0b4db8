// Package packaging holds only tests: of the installers' metadata and
// scripts that packaging/build.sh assembles.
package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// dockerPackages are the Debian and Docker Inc. packages of container
// engines. A dependency on any of them lets apt pick one that conflicts
// with the engine the user has (docker.io conflicts with docker-ce-cli, and
// so removes Docker Desktop for Linux).
var dockerPackages = regexp.MustCompile(`(^|[\s,|])(docker[\w.+-]*|containerd[\w.+-]*|podman[\w.+-]*|runc|moby-[\w.+-]+)([\s,|(]|$)`)

// TestDebNeverFightsDocker: the .deb names no container engine in a field
// apt acts on (Pre-Depends, Depends, Recommends); Suggests, which apt
// never installs by itself, may name them.
func TestDebNeverFightsDocker(t *testing.T) {
	control := readFile(t, filepath.Join("linux", "control.in"))
	script := readFile(t, filepath.Join("linux", "package.sh"))
	depends := regexp.MustCompile(`(?m)^LINUX_DEPENDS="([^"]*)"`).FindStringSubmatch(script)
	if depends == nil {
		t.Fatal("package.sh sets no LINUX_DEPENDS")
	}
	fields := controlFields(control)
	fields["Depends"] = strings.ReplaceAll(fields["Depends"], "@DEPENDS@", depends[1])
	for _, f := range []string{"Pre-Depends", "Depends", "Recommends"} {
		if m := dockerPackages.FindString(fields[f]); m != "" {
			t.Errorf("%s names a container engine (%s): %s", f, strings.TrimSpace(m), fields[f])
		}
	}
	if !dockerPackages.MatchString(fields["Suggests"]) {
		t.Errorf("Suggests names no engine to install: %q", fields["Suggests"])
	}
	// A .deb built from this tree, when there is one, says the same.
	debs, _ := filepath.Glob(filepath.Join("..", "dist", "*.deb"))
	for _, deb := range debs {
		out, err := exec.Command("dpkg-deb", "-f", deb, "Pre-Depends", "Depends", "Recommends").Output()
		if err != nil {
			t.Logf("%s: dpkg-deb: %v", deb, err)
			continue
		}
		if m := dockerPackages.FindString(string(out)); m != "" {
			t.Errorf("%s depends on or recommends a container engine (%s):\n%s", deb, strings.TrimSpace(m), out)
		}
	}
}

// TestDebBesideDockerDesktopRemovesNothing builds a .deb with this tree's
// control file (and no payload) and asks apt, in a simulation against a
// scratch state (linux/simulate-desktop.sh), what installing it would do
// on a machine with Docker Desktop for Linux where Debian's docker.io can
// be installed: nothing may be removed. With the old
// "Recommends: docker.io | …" apt planned to remove docker-desktop.
func TestDebBesideDockerDesktopRemovesNothing(t *testing.T) {
	for _, tool := range []string{"apt-get", "dpkg-deb", "dpkg-query", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, tool+" is not installed (a Debian-like host is needed)")
		}
	}
	depends := regexp.MustCompile(`(?m)^LINUX_DEPENDS="([^"]*)"`).FindStringSubmatch(readFile(t, filepath.Join("linux", "package.sh")))
	if depends == nil {
		t.Fatal("package.sh sets no LINUX_DEPENDS")
	}
	deps := "libc6, " + depends[1]
	for _, p := range strings.Split(deps, ", ") {
		if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output(); err != nil || !strings.Contains(string(out), "installed") {
			skipOrFail(t, p+", which the .deb depends on, is not installed here (.ci/setup-host installs it)")
		}
	}
	control := strings.NewReplacer("@DEB_VERSION@", "0.1.0", "@ARCH@", "amd64", "@INSTALLED_SIZE@", "1", "@DEPENDS@", deps).
		Replace(readFile(t, filepath.Join("linux", "control.in")))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "root", "DEBIAN", "control"), control)
	deb := filepath.Join(dir, "mcp-sandbox_0.1.0_amd64.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", filepath.Join(dir, "root"), deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join("linux", "simulate-desktop.sh"), deb).CombinedOutput()
	if err != nil {
		t.Fatalf("simulate-desktop.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Inst mcp-sandbox") || strings.Contains(string(out), "Remv ") {
		t.Errorf("apt's plan:\n%s", out)
	}
	t.Logf("%s", out)
}

// skipOrFail skips the test, or fails it under CI=true, where .ci/setup-host
// has installed what it needs.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// controlFields reads a deb822 paragraph's single-line fields.
func controlFields(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// TestInstallShUninstallLeavesNothing installs from an unpacked tarball
// into a fresh prefix (twice: an update), uninstalls, and finds the prefix
// as it was, with no empty directory left; a directory that was there
// before, and a file of the user's inside one install.sh made, stay.
func TestInstallShUninstallLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		before    []string // files present under the prefix before installing
		userFiles []string // files the user adds under the prefix after installing
	}{
		{name: "empty prefix"},
		{name: "existing share/applications", before: []string{"share/applications/other.desktop", "bin/tool"}},
		{name: "a user's file in an installed directory", userFiles: []string{"share/icons/hicolor/notes.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tarball := unpackedTarball(t)
			prefix := filepath.Join(t.TempDir(), "prefix")
			for _, f := range tc.before {
				writeFile(t, filepath.Join(prefix, f), "before")
			}
			want := tree(t, prefix)
			for range 2 {
				runInstall(t, tarball, "--no-start", "--prefix", prefix)
			}
			if _, err := os.Stat(filepath.Join(prefix, "bin", "mcp-sandbox-tray")); err != nil {
				t.Fatalf("not installed: %v", err)
			}
			for _, f := range tc.userFiles {
				writeFile(t, filepath.Join(prefix, f), "mine")
			}
			runInstall(t, tarball, "--uninstall", "--prefix", prefix)
			got := tree(t, prefix)
			for _, f := range tc.userFiles {
				// Kept, with the directories leading to it.
				for d := filepath.Dir(f); d != "."; d = filepath.Dir(d) {
					want = append(want, d+"/")
				}
				want = append(want, f)
			}
			sort.Strings(want)
			want = slicesCompact(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("prefix after --uninstall (-want +got):\n%s", diff)
			}
		})
	}
}

// unpackedTarball lays out what the .tar.xz holds: install.sh (with the
// application id filled in), bin/ with stand-in programs, share/ with the
// menu entry and an icon.
func unpackedTarball(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := strings.ReplaceAll(readFile(t, filepath.Join("linux", "install.sh")), "@APP_ID@", "io.github.mcp_sandbox.test")
	writeFile(t, filepath.Join(dir, "install.sh"), script)
	stub := "#!/bin/sh\necho 0.0.0-test\n"
	writeFile(t, filepath.Join(dir, "bin", "mcp-sandbox"), stub)
	writeFile(t, filepath.Join(dir, "bin", "mcp-sandbox-tray"), stub)
	writeFile(t, filepath.Join(dir, "share", "applications", "io.github.mcp_sandbox.test.desktop"),
		"[Desktop Entry]\nType=Application\nName=MCP Sandbox\nExec=mcp-sandbox-tray\nTryExec=mcp-sandbox-tray\n")
	writeFile(t, filepath.Join(dir, "share", "icons", "hicolor", "64x64", "apps", "mcp-sandbox.png"), "png")
	writeFile(t, filepath.Join(dir, "share", "icons", "hicolor", "scalable", "apps", "mcp-sandbox.svg"), "<svg/>")
	for _, f := range []string{"install.sh", "bin/mcp-sandbox", "bin/mcp-sandbox-tray"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runInstall(t *testing.T, tarball string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(tarball, "install.sh"), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "DISPLAY=", "WAYLAND_DISPLAY=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh %v: %v\n%s", args, err, out)
	}
}

// tree lists every file and directory below root (directories with a
// trailing slash), relative to root, but for the desktop's menu and icon
// caches; nil when root does not exist.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) && p == root {
			return filepath.SkipAll
		}
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if n := d.Name(); n == "mimeinfo.cache" || n == "icon-theme.cache" {
			return nil // the desktop's, regenerated for directories it already had
		}
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func slicesCompact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInstallShUninstallCleansClients installs the tarball's layout with
// the real server, has it configure Cursor and Claude Desktop, points
// Claude's entry at another program as a user might, and uninstalls: the
// entry that ran this copy is gone (a backup kept, and install.sh says
// so), the one the user changed and the rest of each file stay.
func TestInstallShUninstallCleansClients(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the tarball's install.sh is for Linux")
	}
	testenv.NeedBinaries(t)
	tarball := unpackedTarball(t)
	server := filepath.Join(tarball, "bin", "mcp-sandbox")
	if err := os.Remove(server); err != nil { // the stand-in
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", server, "../cmd/mcp-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := t.TempDir()
	prefix := filepath.Join(home, ".local")
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	writeFile(t, cursor, `{"mcpServers": {"other": {"command": "/usr/bin/other"}}}`+"\n")
	writeFile(t, claude, "{}\n")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "DISPLAY=", "WAYLAND_DISPLAY=", "DOCKER_HOST=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(filepath.Join(tarball, "install.sh"), "--no-start")
	installed := filepath.Join(prefix, "bin", "mcp-sandbox")
	run(installed, "clients", "install", "--client", "cursor")
	run(installed, "clients", "install", "--client", "claude")
	if !strings.Contains(readFile(t, cursor), installed) {
		t.Fatalf("cursor not configured:\n%s", readFile(t, cursor))
	}
	changed := strings.ReplaceAll(readFile(t, claude), installed, "/opt/mine/mcp-sandbox")
	writeFile(t, claude, changed)

	out := run(filepath.Join(tarball, "install.sh"), "--uninstall")
	for _, want := range []string{"cursor: removed the entry from " + cursor + ", backup ", "claude: left the mcp-sandbox entry in " + claude} {
		if !strings.Contains(out, want) {
			t.Errorf("install.sh --uninstall did not say %q:\n%s", want, out)
		}
	}
	if got := readFile(t, cursor); strings.Contains(got, "mcp-sandbox") || !strings.Contains(got, `"other"`) {
		t.Errorf("cursor after uninstall:\n%s", got)
	}
	if backups, _ := filepath.Glob(cursor + "*.bak*"); len(backups) == 0 {
		entries, _ := os.ReadDir(filepath.Dir(cursor))
		t.Errorf("no backup of %s: %v", cursor, entries)
	}
	if got := readFile(t, claude); got != changed {
		t.Errorf("claude's changed entry was touched:\n%s", got)
	}
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", installed, err)
	}
}
