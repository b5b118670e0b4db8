// Package backendtest is the behaviour every sandbox backend must have,
// written as tests a backend runs against itself:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) backend.Backend { return newBackend(t) },
//			backendtest.Options{Image: "busybox"})
//	}
//
// The suite makes its own containers, labelled io.mcp-sandbox.managed with
// an owner of its own (and this process as the owner pid, so that other
// servers' reapers leave them alone), and removes them when it ends. The
// image needs /bin/sh and the usual tools (cat, sleep, setsid, stat, seq;
// busybox is enough).
//
// Imports: sandbox/backend
package backendtest
