package state

import "testing"

// TestPreviewURL: a record's preview becomes a loopback URL only when
// both ports are in range; the URL is made, never read from the file.
func TestPreviewURL(t *testing.T) {
	tests := []struct {
		p    Preview
		want string
	}{
		{Preview{Port: 8000, HostPort: 41234}, "http://127.0.0.1:41234/"},
		{Preview{Port: 65535, HostPort: 1}, "http://127.0.0.1:1/"},
		{Preview{Port: 0, HostPort: 41234}, ""},
		{Preview{Port: 8000, HostPort: 0}, ""},
		{Preview{Port: 8000, HostPort: 65536}, ""},
		{Preview{Port: -1, HostPort: 80}, ""},
	}
	for _, tc := range tests {
		if got := tc.p.URL(); got != tc.want {
			t.Errorf("%+v.URL() = %q, want %q", tc.p, got, tc.want)
		}
	}
}
