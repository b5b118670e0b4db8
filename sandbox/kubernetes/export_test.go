package kubernetes

import "testing"

// NewTestBackend is testBackend for the external tests: a Backend on the
// test cluster in a namespace of the test's own, or a skip without one.
func NewTestBackend(t *testing.T, cfg Config) *Backend { return testBackend(t, cfg) }
