package clientconfig

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What the golden files install: a binary path with a space, to check
// quoting, and a Docker endpoint.
const (
	goldenCommand    = "/opt/MCP Sandbox/bin/mcp-sandbox"
	goldenDockerHost = "unix:///run/user/1000/docker.sock"
)

// goldenCase is one starting file for one client: before is nil for a
// file that does not exist.
type goldenCase struct {
	name   string
	before []byte
}

func goldenCases(t *testing.T, c *Client) (cases []goldenCase, ext string) {
	ext = ".json"
	if _, ok := c.format.(tomlFormat); ok {
		ext = ".toml"
	}
	cases = []goldenCase{{name: "missing"}, {name: "empty", before: []byte{}}}
	if ext == ".json" {
		cases = append(cases, goldenCase{name: "braces", before: []byte("{}\n")})
	}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", c.name, "*.before"+ext))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, goldenCase{name: strings.TrimSuffix(filepath.Base(f), ".before"+ext), before: b})
	}
	return cases, ext
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", file, diff)
	}
}

// setUp writes before as the client's config file in a fresh home.
func setUp(t *testing.T, c *Client, before []byte) (Env, string, string) {
	t.Helper()
	env, home := testEnv(t)
	path, err := c.ConfigPath(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if before != nil {
		if err := os.WriteFile(path, before, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return env, home, path
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".*.bak")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGolden installs into and uninstalls from every starting file of every
// client and compares the results with testdata/golden/<client>/. A file
// that does not parse, or is shaped wrongly, must come out byte for byte as
// it went in, and the error is compared instead.
func TestGolden(t *testing.T) {
	ctx := context.Background()
	for _, c := range Clients() {
		cases, ext := goldenCases(t, c)
		for _, tc := range cases {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				dir := filepath.Join("testdata", "golden", c.name)
				env, home, path := setUp(t, c, tc.before)
				opts := InstallOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost, Force: true}
				res, err := c.Install(ctx, opts)
				if err != nil {
					if !errors.Is(err, ErrParse) && !errors.Is(err, ErrStructure) {
						t.Fatalf("Install: %v", err)
					}
					checkGolden(t, filepath.Join(dir, tc.name+".err"), []byte(strings.ReplaceAll(err.Error(), home, "$HOME")+"\n"))
					after, rerr := os.ReadFile(path)
					if rerr != nil || string(after) != string(tc.before) {
						t.Errorf("file changed after a failed install:\n%s", after)
					}
					if b := backups(t, path); len(b) != 0 {
						t.Errorf("backups after a failed install: %v", b)
					}
					if _, uerr := c.Uninstall(ctx, UninstallOptions{Env: env}); errors.Is(err, ErrParse) && !errors.Is(uerr, ErrParse) {
						t.Errorf("Uninstall of a file that does not parse: %v, want ErrParse", uerr)
					}
					return
				}
				if !res.Changed || !res.Written {
					t.Errorf("Install result = %+v, want changed and written", res)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join(dir, tc.name+".install"+ext), got)
				wantBackups := 1
				if tc.before == nil {
					wantBackups = 0
				}
				if b := backups(t, path); len(b) != wantBackups {
					t.Errorf("backups = %v, want %d", b, wantBackups)
				}

				// A second install finds nothing to do: no write, no backup.
				res, err = c.Install(ctx, opts)
				if err != nil || res.Changed || res.Written || res.Backup != "" {
					t.Errorf("second Install = %+v, %v; want no change", res, err)
				}
				if b := backups(t, path); len(b) != wantBackups {
					t.Errorf("backups after second install = %v, want %d", b, wantBackups)
				}
				st, err := c.Status(StatusOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost})
				if err != nil || !st.Configured || !st.Matches {
					t.Errorf("Status after install = %+v, %v; want configured and matching", st, err)
				}

				// Uninstall from the file as it was.
				if tc.before == nil {
					return
				}
				env2, _, path2 := setUp(t, c, tc.before)
				if _, err := c.Uninstall(ctx, UninstallOptions{Env: env2}); err != nil {
					t.Fatalf("Uninstall: %v", err)
				}
				got, err = os.ReadFile(path2)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join(dir, tc.name+".uninstall"+ext), got)
			})
		}
	}
}

// TestInstallUninstallRoundTrip checks that removing an entry we added
// gives back the very bytes of a file that already had a servers table.
func TestInstallUninstallRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, c := range Clients() {
		cases, _ := goldenCases(t, c)
		for _, tc := range cases {
			if tc.before == nil || strings.HasPrefix(tc.name, "broken") || strings.HasPrefix(tc.name, "structure") {
				continue
			}
			raw, err := c.format.read(bytes.TrimPrefix(tc.before, utf8BOM))
			if err != nil || raw != nil || !hasServers(c, tc.before) {
				continue // only files with a servers table and no entry of ours
			}
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				env, _, path := setUp(t, c, tc.before)
				if _, err := c.Install(ctx, InstallOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost}); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Uninstall(ctx, UninstallOptions{Env: env}); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(path)
				if diff := cmp.Diff(string(tc.before), string(got)); diff != "" {
					t.Errorf("install then uninstall changed the file (-before +after):\n%s", diff)
				}
			})
		}
	}
}

func hasServers(c *Client, src []byte) bool {
	switch f := c.format.(type) {
	case jsonFormat:
		return strings.Contains(string(src), `"`+f.key+`"`)
	default:
		return strings.Contains(string(src), "[mcp_servers.")
	}
}
