package testenv

import (
	"os"
	"testing"
)

// NeedBinaries skips a test that builds this module's programs (./cmd/...,
// the agent) or needs cgo, in the fast layer: a build without cgo
// (CGO_ENABLED=0) and CI unset. Building them took most of the no-engine
// run's time; the full `go test ./...` (the README's, CI's) runs these.
func NeedBinaries(t testing.TB) {
	t.Helper()
	if !cgoEnabled && os.Getenv("CI") != "true" {
		t.Skip("skipping: builds the module's binaries; the fast layer (CGO_ENABLED=0) leaves that to the full go test ./... with cgo")
	}
}
