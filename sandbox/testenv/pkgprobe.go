package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// probeBackend is the in-tree PEP 517 build backend of mcpsbxprobe: what
// an AI-chosen setup.py can run while installing. It tries each address
// in $MCPSBX_PROBE (host:port, comma-separated) directly and through the
// helper's proxy, and builds a wheel whose module's VALUE says what came
// back ("addr direct=... proxy=..." per address). It needs no build
// requirements, so pip fetches nothing else to run it.
const probeBackend = `import os, socket, urllib.request, zipfile, base64, hashlib

def _probe():
    out = []
    for a in filter(None, os.environ.get("MCPSBX_PROBE", "").split(",")):
        h, p = a.rsplit(":", 1)
        try:
            socket.create_connection((h, int(p)), timeout=5).close()
            d = "connected"
        except Exception as e:
            d = type(e).__name__
        try:
            d2 = str(urllib.request.urlopen("http://%s/" % a, timeout=10).status)
        except urllib.error.HTTPError as e:
            d2 = str(e.code)
        except Exception as e:
            d2 = type(e).__name__
        out.append("%s direct=%s proxy=%s" % (a, d, d2))
    return "; ".join(out)

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    di = "mcpsbxprobe-1.0.dist-info"
    files = {"mcpsbxprobe/__init__.py": "VALUE = %r\n" % _probe(),
             di + "/METADATA": "Metadata-Version: 2.1\nName: mcpsbxprobe\nVersion: 1.0\n",
             di + "/WHEEL": "Wheel-Version: 1.0\nGenerator: probe\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    name = "mcpsbxprobe-1.0-py3-none-any.whl"
    rec = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for n, c in files.items():
            z.writestr(n, c)
            h = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
            rec.append("%s,sha256=%s,%d" % (n, h, len(c.encode())))
        rec.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(rec) + "\n")
    return name
`

// probeSdist is mcpsbxprobe 1.0's source archive (see probeBackend).
func probeSdist() (file string, data []byte, link string) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{
		{"mcpsbxprobe-1.0/pyproject.toml", "[build-system]\nrequires = []\nbuild-backend = \"probe_backend\"\nbackend-path = [\".\"]\n\n[project]\nname = \"mcpsbxprobe\"\nversion = \"1.0\"\n"},
		{"mcpsbxprobe-1.0/probe_backend.py", probeBackend},
		{"mcpsbxprobe-1.0/PKG-INFO", "Metadata-Version: 2.1\nName: mcpsbxprobe\nVersion: 1.0\n"},
	} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.body))
	}
	tw.Close()
	gz.Close()
	file = "mcpsbxprobe-1.0.tar.gz"
	sum := sha256.Sum256(buf.Bytes())
	return file, buf.Bytes(), fmt.Sprintf(`<a href="/files/%s#sha256=%s">%s</a>`, file, hex.EncodeToString(sum[:]), file)
}
