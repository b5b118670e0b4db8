package sandbox_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// wheel builds a pure-Python wheel of a one-module package by hand.
func wheel(t *testing.T, name, version, module string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	distInfo := fmt.Sprintf("%s-%s.dist-info", name, version)
	files := map[string]string{
		name + "/__init__.py":       module,
		distInfo + "/METADATA":      fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		distInfo + "/WHEEL":         "Wheel-Version: 1.0\nGenerator: mcp-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		distInfo + "/top_level.txt": name + "\n",
	}
	var record strings.Builder
	for _, n := range []string{name + "/__init__.py", distInfo + "/METADATA", distInfo + "/WHEEL", distInfo + "/top_level.txt"} {
		w, _ := zw.Create(n)
		w.Write([]byte(files[n]))
		sum := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", distInfo)
	w, _ := zw.Create(distInfo + "/RECORD")
	w.Write([]byte(record.String()))
	zw.Close()
	return buf.Bytes()
}

// npmTarball builds an npm package tarball by hand.
func npmTarball(t *testing.T, name, version, index string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for n, c := range map[string]string{
		"package/package.json": fmt.Sprintf(`{"name":%q,"version":%q,"main":"index.js"}`, name, version),
		"package/index.js":     index,
	} {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(c)), Typeflag: tar.TypeReg})
		tw.Write([]byte(c))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// packageIndex serves a PEP 503 simple index with one wheel and an npm
// registry with one package, on an address the Docker bridge can reach.
func packageIndex(t *testing.T, cli *client.Client) (pipURL, npmURL, host string) {
	t.Helper()
	nw, err := cli.NetworkInspect(context.Background(), "bridge", network.InspectOptions{})
	if err != nil || len(nw.IPAM.Config) == 0 {
		testenv.Missing(t, fmt.Sprintf("the engine's bridge network (%v)", err))
	}
	host = nw.IPAM.Config[0].Gateway
	whl := wheel(t, "mcpsbxdemo", "1.0", "VALUE = 42\n")
	whlName := "mcpsbxdemo-1.0-py3-none-any.whl"
	whlSum := sha256.Sum256(whl)
	tgz := npmTarball(t, "mcpsbx-demo", "1.0.0", "module.exports = {value: 43};\n")
	tgzSum := sha1.Sum(tgz)

	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		testenv.Missing(t, "a listener on the Docker bridge address "+host+": "+err.Error())
	}
	base := "http://" + l.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/mcpsbxdemo/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, whlName, hex.EncodeToString(whlSum[:]), whlName)
	})
	mux.HandleFunc("/files/"+whlName, func(w http.ResponseWriter, r *http.Request) { w.Write(whl) })
	mux.HandleFunc("/npm/mcpsbx-demo", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"name": "mcpsbx-demo", "dist-tags": map[string]string{"latest": "1.0.0"},
			"versions": map[string]any{"1.0.0": map[string]any{
				"name": "mcpsbx-demo", "version": "1.0.0",
				"dist": map[string]string{"tarball": base + "/npm/mcpsbx-demo/-/mcpsbx-demo-1.0.0.tgz", "shasum": hex.EncodeToString(tgzSum[:])},
			}},
		})
	})
	mux.HandleFunc("/npm/mcpsbx-demo/-/mcpsbx-demo-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) { w.Write(tgz) })
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return base + "/simple", base + "/npm/", host
}

// TestInstallPackages installs a wheel from a local index (no public index
// is reachable here) through the helper, imports it in the sandbox, and
// checks the sandbox still has no network interface but loopback.
func TestInstallPackages(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage, testenv.NodeImage)
	pipURL, npmURL, host := packageIndex(t, cli)
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Network.InstallEnv = map[string]string{
			"PIP_INDEX_URL": pipURL, "PIP_TRUSTED_HOST": host,
			"npm_config_registry": npmURL,
		}
	})
	ctx := context.Background()

	py := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	res, err := eng.InstallPackages(ctx, py.ID, sandbox.InstallRequest{Packages: []string{"mcpsbxdemo==1.0"}}, nil)
	if err != nil || res.ExitCode != 0 || res.Manager != "pip" || len(res.Installed) != 1 {
		t.Fatalf("pip install: %+v %v", res, err)
	}
	run, err := eng.RunCode(ctx, sandbox.RunRequest{SandboxID: py.ID, Code: "import mcpsbxdemo\nprint(mcpsbxdemo.VALUE)"}, nil)
	if err != nil || run.Stdout != "42\n" {
		t.Fatalf("import after install: %+v %v", run, err)
	}
	if r := mustExec(t, eng, py.ID, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`); r.Stdout != "lo\n" {
		t.Errorf("the sandbox has interfaces besides lo: %q", r.Stdout)
	}

	js := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	res, err = eng.InstallPackages(ctx, js.ID, sandbox.InstallRequest{Packages: []string{"mcpsbx-demo@1.0.0"}}, nil)
	if err != nil || res.ExitCode != 0 || res.Manager != "npm" {
		t.Fatalf("npm install: %+v %v", res, err)
	}
	run, err = eng.RunCode(ctx, sandbox.RunRequest{SandboxID: js.ID, Code: "console.log(require('mcpsbx-demo').value)"}, nil)
	if err != nil || run.Stdout != "43\n" {
		t.Fatalf("require after install: %+v %v", run, err)
	}

	// An unknown package is a normal result with a hint, not an error.
	res, err = eng.InstallPackages(ctx, py.ID, sandbox.InstallRequest{Packages: []string{"no-such-package-xyz"}}, nil)
	if err != nil || res.ExitCode == 0 || !strings.Contains(res.Note, "did not have it") {
		t.Errorf("unknown package: %+v %v", res, err)
	}
}

func TestInstallPackagesRefused(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  sandbox.InstallRequest
	}{
		{"option smuggled as a name", sandbox.InstallRequest{Packages: []string{"--extra-index-url=http://evil"}}},
		{"short option", sandbox.InstallRequest{Packages: []string{"-i", "http://evil"}}},
		{"shell metacharacters", sandbox.InstallRequest{Packages: []string{"numpy; rm -rf /"}}},
		{"url", sandbox.InstallRequest{Packages: []string{"git+https://evil/x.git"}}},
		{"path", sandbox.InstallRequest{Packages: []string{"../x"}}},
		{"newline", sandbox.InstallRequest{Packages: []string{"numpy\nrequests"}}},
		{"empty", sandbox.InstallRequest{Packages: nil}},
		{"npm option", sandbox.InstallRequest{Manager: "npm", Packages: []string{"--registry=http://evil"}}},
		{"unknown manager", sandbox.InstallRequest{Manager: "apt", Packages: []string{"curl"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := eng.InstallPackages(ctx, sb.ID, tc.req, nil); !errors.Is(err, sandbox.ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	off, _ := newEngine(t, func(c *config.Config) { c.Network.Install = false })
	sb2 := mustCreate(t, off, sandbox.CreateRequest{Language: "python"})
	_, err := off.InstallPackages(ctx, sb2.ID, sandbox.InstallRequest{Packages: []string{"requests"}}, nil)
	if !errors.Is(err, sandbox.ErrPolicy) || !strings.Contains(err.Error(), "network.install") {
		t.Errorf("installs off: %v", err)
	}
}
