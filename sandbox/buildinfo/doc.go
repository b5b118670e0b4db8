// Package buildinfo holds the version and commit stamped into both binaries
// at build time:
//
//	go build -ldflags "-X github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo.Version=1.2.3 \
//	    -X github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo.Commit=abc1234" ./cmd/...
//
// Without the flags, the commit comes from the Go toolchain's VCS stamp.
//
// Imports: none
package buildinfo
