package testenv

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// wheel builds a pure-Python wheel of a one-module package by hand.
func wheel(name, version, module string) []byte {
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
func npmTarball(name, version, index string) []byte {
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

// PackageIndex serves on l, until the test ends, a PEP 503 simple index
// (mcpsbxdemo 1.0, whose VALUE is 42, and 2.0, whose VALUE is 2;
// mcpsbxtwo 1.0, whose VALUE is 'two'; mcpsbxprobe 1.0, a source archive
// whose build probes the addresses in $MCPSBX_PROBE) and an npm registry with one
// package (mcpsbx-demo 1.0.0, whose value is 43), built by hand: no public
// index is reachable from the tests. Each request is passed to seen first,
// when it is not nil. It returns the pip index URL (PIP_INDEX_URL), the
// npm registry URL (npm_config_registry) and downloads, which counts the
// downloads of a wheel file.
func PackageIndex(t testing.TB, l net.Listener, seen func(*http.Request)) (pipURL, npmURL string, downloads func(file string) int) {
	t.Helper()
	wheels := map[string][]byte{} // file name -> wheel
	links := map[string]string{}  // project -> index page
	for _, w := range []struct{ name, version, module string }{
		{"mcpsbxdemo", "1.0", "VALUE = 42\n"},
		{"mcpsbxdemo", "2.0", "VALUE = 2\n"},
		{"mcpsbxtwo", "1.0", "VALUE = 'two'\n"},
	} {
		whl := wheel(w.name, w.version, w.module)
		file := fmt.Sprintf("%s-%s-py3-none-any.whl", w.name, w.version)
		sum := sha256.Sum256(whl)
		wheels[file] = whl
		links[w.name] += fmt.Sprintf(`<a href="/files/%s#sha256=%s">%s</a>`, file, hex.EncodeToString(sum[:]), file)
	}
	// mcpsbxprobe is a source archive: its build runs code, as an
	// AI-chosen package's setup.py would (see probeBackend).
	file, sdist, link := probeSdist()
	wheels[file], links["mcpsbxprobe"] = sdist, link
	tgz := npmTarball("mcpsbx-demo", "1.0.0", "module.exports = {value: 43};\n")
	tgzSum := sha1.Sum(tgz)

	base := "http://" + l.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/{project}/", func(w http.ResponseWriter, r *http.Request) {
		page, ok := links[r.PathValue("project")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<html><body>%s</body></html>", page)
	})
	var mu sync.Mutex
	count := map[string]int{}
	mux.HandleFunc("/files/{file}", func(w http.ResponseWriter, r *http.Request) {
		whl, ok := wheels[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		count[r.PathValue("file")]++
		mu.Unlock()
		w.Header().Set("Cache-Control", "max-age=365000000, immutable") // as PyPI serves files
		w.Write(whl)
	})
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
	var h http.Handler = mux
	if seen != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen(r)
			mux.ServeHTTP(w, r)
		})
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return base + "/simple", base + "/npm/", func(file string) int {
		mu.Lock()
		defer mu.Unlock()
		return count[file]
	}
}

// PipTraps is Python that plants, as the sandbox's own code would, what a
// pip installer with the network must never run or read: a .pth file and
// usercustomize in the user site, a pip module in the working directory,
// and pip config files. Each, if run or read, leaves a file named pwned-*
// in /workspace or /tmp.
func PipTraps() string {
	mark := func(name string) string {
		return "import os; [open(os.path.join(d, 'pwned-" + name + "'), 'w').write('x') for d in ('/workspace', '/tmp')]\n"
	}
	return "import os, site\n" +
		"sp = site.getusersitepackages(); os.makedirs(sp, exist_ok=True)\n" +
		"open(os.path.join(sp, 'zz-evil.pth'), 'w').write(" + strconv.Quote(mark("pth")) + ")\n" +
		"open(os.path.join(sp, 'usercustomize.py'), 'w').write(" + strconv.Quote(mark("usercustomize")) + ")\n" +
		"os.makedirs('/workspace/pip', exist_ok=True)\n" +
		"open('/workspace/pip/__init__.py', 'w').write(" + strconv.Quote(mark("cwd-module")) + ")\n" +
		"open('/workspace/pip/__main__.py', 'w').write('')\n" +
		"os.makedirs('/workspace/.config/pip', exist_ok=True)\n" +
		"open('/workspace/.config/pip/pip.conf', 'w').write('[global]\\nlog = /workspace/pwned-pipconf\\n')\n" +
		"open('/workspace/pip.conf', 'w').write('[global]\\nlog = /workspace/pwned-pipconf2\\n')\n"
}
