package buildbin

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Arches are the architectures the server carries an agent for.
var Arches = []string{"amd64", "arm64"}

// File is the committed (compressed) binary for arch, relative to package
// agent.
func File(arch string) string {
	return filepath.Join("prebuilt", "mcp-sandbox-agent-linux-"+arch+".gz")
}

// Compress returns bin as the server embeds it: gzip at the best level,
// with an empty header, so the same binary always gives the same bytes.
func Compress(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(bin); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Build builds the agent for linux/arch from package agent's directory
// and returns the bytes.
func Build(arch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "mcp-sandbox-agent-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "agent")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", out, "./cmd/mcp-sandbox-agent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build agent for %s: %v: %s", arch, err, msg)
	}
	return os.ReadFile(out)
}
