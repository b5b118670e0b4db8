package config

import (
	"errors"
	"strings"
	"testing"
)

// backend.kind: Docker is the only backend; Kubernetes, asked for
// explicitly, is refused loudly (never a silent fall back to Docker), and
// so is a [kubernetes] table.
func TestBackendKind(t *testing.T) {
	for _, tc := range []struct {
		file, want string // want: "" valid, else part of the error
	}{
		{"", ""},
		{"[backend]\nkind = \"docker\"\n", ""},
		{"[backend]\nkind = \"kubernetes\"\n", `c.toml:2: backend.kind: "kubernetes": the Kubernetes backend is not yet available`},
		{"[backend]\nkind = \"podman\"\n", `backend.kind: "podman" is not one of`},
		{"[kubernetes]\nnamespace = \"sandboxes\"\n", "kubernetes: the Kubernetes backend is not yet available"},
		{"[kubernetes]\n", "c.toml:1: kubernetes: the Kubernetes backend is not yet available"},
	} {
		c, err := Parse("c.toml", []byte(tc.file))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.file, err)
		case tc.want == "" && c.Backend.Kind != "" && c.Backend.Kind != "docker":
			t.Errorf("%q: kind %q", tc.file, c.Backend.Kind)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid)):
			t.Errorf("%q: err = %v, want %q", tc.file, err, tc.want)
		}
	}
}
