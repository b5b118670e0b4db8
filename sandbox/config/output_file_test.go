package config

import (
	"strings"
	"testing"
)

// limits.output_file_bytes is 0 (no file) or holds at least what a call
// returns, and at most 1 GiB; the error names the key.
func TestOutputFileBytesValidated(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{0, true}, {8 << 20, true}, {16384, true}, {16383, false}, {-1, false}, {1<<30 + 1, false}} {
		c := Default()
		c.Limits.OutputFileBytes = tc.n
		err := c.validate()
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "limits.output_file_bytes") {
			t.Errorf("output_file_bytes = %d: %v, want ok %v", tc.n, err, tc.ok)
		}
	}
}
