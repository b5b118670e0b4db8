package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backend.kind and the [kubernetes] table: Docker and Kubernetes are
// accepted; every bad value is an error naming its line and key in plain
// words.
func TestBackendKind(t *testing.T) {
	for _, tc := range []struct {
		file, want string // want: "" valid, else part of the error
	}{
		{"", ""},
		{"[backend]\nkind = \"docker\"\n", ""},
		{"[backend]\nkind = \"kubernetes\"\n", ""},
		{"[backend]\nkind = \"podman\"\n", `c.toml:2: backend.kind: "podman" is not one of "", docker, kubernetes`},
		{"[kubernetes]\nnamespace = \"sandboxes\"\n", ""},
		{"[kubernetes]\n", ""},
		{"[kubernetes]\nkubeconfig = \"/k\"\ncontext = \"prod-eu\"\nnamespace = \"sb\"\nruntime_class = \"gvisor\"\nuse_agent_sandbox = \"never\"\nwarm_pool = { python = 2, bash = 0 }\n", ""},
		{"[kubernetes]\nnamespace = \"Sand_boxes\"\n", `c.toml:2: kubernetes.namespace: "Sand_boxes" is not a namespace name`},
		{"[kubernetes]\nnamespace = \"" + strings.Repeat("a", 64) + "\"\n", `kubernetes.namespace:`},
		{"[kubernetes]\nruntime_class = \"g visor\"\n", `c.toml:2: kubernetes.runtime_class: "g visor" is not a RuntimeClass name`},
		{"[kubernetes]\nuse_agent_sandbox = \"yes\"\n", `c.toml:2: kubernetes.use_agent_sandbox: "yes" is not one of auto, always, never`},
		{"[kubernetes]\nuse_agent_sandbox = \"\"\n", `kubernetes.use_agent_sandbox: "" is not one of`},
		{"[kubernetes]\nwarm_pool = { cobol = 1 }\n", `c.toml:2: kubernetes.warm_pool: unknown language "cobol"`},
		{"[kubernetes]\nwarm_pool = { python = 17 }\n", `kubernetes.warm_pool: python: the size must be between 0 and 16`},
		{"[kubernetes]\nwarm_pool = { python = -1 }\n", `kubernetes.warm_pool: python: the size must be between 0 and 16`},
		{"[kubernetes]\ncpu_request = \"50m\"\n", ""},
		{"[kubernetes]\ncpu_request = \"0.25\"\n", ""},
		{"[kubernetes]\ncpu_request = \"2\"\n", ""},
		{"[kubernetes]\ncpu_request = \"0m\"\n", `c.toml:2: kubernetes.cpu_request: "0m" is not a CPU quantity: write millicores ("50m") or cores ("0.25"), more than 0`},
		{"[kubernetes]\ncpu_request = \"0.0\"\n", `kubernetes.cpu_request: "0.0" is not a CPU quantity`},
		{"[kubernetes]\ncpu_request = \"100Mi\"\n", `kubernetes.cpu_request: "100Mi" is not a CPU quantity`},
		{"[kubernetes]\ncpu_request = \"1e3\"\n", `kubernetes.cpu_request: "1e3" is not a CPU quantity`},
		{"[kubernetes]\ncpu_request = \"-1\"\n", `kubernetes.cpu_request: "-1" is not a CPU quantity`},
		{"[kubernetes]\ncontext = \"a\\u0007b\"\n", `kubernetes.context: must be a context name`},
		{"[kubernetes]\nkubeconfig = \"a\\nb\"\n", `kubernetes.kubeconfig: holds a control character`},
		{"[kubernetes]\nnamspace = \"x\"\n", `c.toml:2: kubernetes.namspace: unknown field`},
	} {
		c, err := Parse("c.toml", []byte(tc.file))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid)):
			t.Errorf("%q: err = %v, want %q", tc.file, err, tc.want)
		case tc.want == "" && c.Kubernetes.UseAgentSandbox == "":
			t.Errorf("%q: use_agent_sandbox empty, want its default", tc.file)
		}
	}
}

// Save writes the [kubernetes] table, warm_pool as an inline table, and
// what it wrote loads back as it was; a file that never mentions
// Kubernetes gets no [kubernetes] table.
func TestSaveKubernetesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if _, err := Save(path, Default()); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "[kubernetes]") {
		t.Errorf("a new file at the defaults spells out [kubernetes]:\n%s", data)
	}
	c := Default()
	c.Backend.Kind = BackendKubernetes
	c.Kubernetes = Kubernetes{Kubeconfig: "/etc/k.conf", Context: "prod \"eu\"", Namespace: "sb", RuntimeClass: "gvisor",
		UseAgentSandbox: "always", WarmPool: map[string]int{"python": 2, "bash": 1}}
	for step := range 2 {
		if _, err := Save(path, c); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		got, err := Load(path)
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Fatalf("step %d: %v\n%s", step, err, data)
		}
		if got.Backend.Kind != c.Backend.Kind || got.Kubernetes.Context != c.Kubernetes.Context ||
			got.Kubernetes.Kubeconfig != c.Kubernetes.Kubeconfig || got.Kubernetes.Namespace != c.Kubernetes.Namespace ||
			got.Kubernetes.RuntimeClass != c.Kubernetes.RuntimeClass || got.Kubernetes.UseAgentSandbox != c.Kubernetes.UseAgentSandbox ||
			!maps.Equal(got.Kubernetes.WarmPool, c.Kubernetes.WarmPool) {
			t.Errorf("step %d: loaded %+v, saved %+v", step, got.Kubernetes, c.Kubernetes)
		}
		c.Kubernetes.WarmPool = map[string]int{"python": 3}
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "warm_pool = { python = 3 }") {
		t.Errorf("warm_pool not written as an inline table:\n%s", data)
	}
}
