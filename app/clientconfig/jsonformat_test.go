package clientconfig

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These cases pin down layouts the golden files do not show: each gives a
// file, what Install (or Uninstall) makes of it, and nothing else may move.
func TestJSONEdits(t *testing.T) {
	f := jsonFormat{key: "mcpServers", indent: "  "}
	want := wantEntry("/bin/mcp-sandbox", "")
	tests := []struct {
		name      string
		in        string
		uninstall bool
		out       string
		err       error
	}{
		{
			name: "comments inside our entry survive an update",
			in: `{"mcpServers": {
  "mcp-sandbox": {
    // moved in 2024
    "command": "/old/mcp-sandbox", /* was here */
    "args": ["serve"]
  }
}}`,
			out: `{"mcpServers": {
  "mcp-sandbox": {
    // moved in 2024
    "command": "/bin/mcp-sandbox", /* was here */
    "args": ["serve"]
  }
}}`,
		},
		{
			name: "a duplicate entry: the last one counts, the others go",
			in: `{
  "mcpServers": {
    "mcp-sandbox": {"command": "/a"},
    "other": {"command": "x"},
    "mcp-sandbox": {"command": "/bin/mcp-sandbox", "args": ["serve"]}
  }
}`,
			out: `{
  "mcpServers": {
    "other": {"command": "x"},
    "mcp-sandbox": {"command": "/bin/mcp-sandbox", "args": ["serve"]}
  }
}`,
		},
		{
			name: "an entry that is not an object is replaced",
			in:   "{\n  \"mcpServers\": {\n    \"mcp-sandbox\": null\n  }\n}\n",
			out:  "{\n  \"mcpServers\": {\n    \"mcp-sandbox\": {\n      \"command\": \"/bin/mcp-sandbox\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
		},
		{
			name: "DOCKER_HOST is removed when none is given, and an env left empty goes",
			in:   "{\n  \"mcpServers\": {\n    \"mcp-sandbox\": {\n      \"command\": \"/bin/mcp-sandbox\",\n      \"args\": [\"serve\"],\n      \"env\": {\n        \"DOCKER_HOST\": \"tcp://x:2375\"\n      }\n    }\n  }\n}\n",
			out:  "{\n  \"mcpServers\": {\n    \"mcp-sandbox\": {\n      \"command\": \"/bin/mcp-sandbox\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
		},
		{
			name: "a null env is removed",
			in:   `{"mcpServers": {"mcp-sandbox": {"command": "/bin/mcp-sandbox", "args": ["serve"], "env": null}}}`,
			out:  `{"mcpServers": {"mcp-sandbox": {"command": "/bin/mcp-sandbox", "args": ["serve"]}}}`,
		},
		{
			name: "an empty servers object on one line of a multi-line file",
			in:   "{\n  \"mcpServers\": {},\n  \"x\": 1\n}\n",
			out:  "{\n  \"mcpServers\": {\n    \"mcp-sandbox\": {\n      \"command\": \"/bin/mcp-sandbox\",\n      \"args\": [\"serve\"]\n    }\n  },\n  \"x\": 1\n}\n",
		},
		{
			name: "a comment in an empty servers object stays on its line",
			in:   "{\n  \"mcpServers\": { // none yet\n  }\n}\n",
			out:  "{\n  \"mcpServers\": { // none yet\n    \"mcp-sandbox\": {\n      \"command\": \"/bin/mcp-sandbox\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
		},
		{
			name:      "uninstall from the middle keeps the neighbours' comments",
			uninstall: true,
			in:        "{\n  \"mcpServers\": {\n    \"a\": 1, // about a\n    // about ours\n    \"mcp-sandbox\": {\"command\": \"x\"}, // ours\n    \"b\": 2 // about b\n  }\n}\n",
			out:       "{\n  \"mcpServers\": {\n    \"a\": 1, // about a\n    // about ours\n    \"b\": 2 // about b\n  }\n}\n",
		},
		{
			name:      "uninstall the last member with a trailing comma keeps the comma style",
			uninstall: true,
			in:        "{\n  \"mcpServers\": {\n    \"a\": 1,\n    \"mcp-sandbox\": {},\n  },\n}\n",
			out:       "{\n  \"mcpServers\": {\n    \"a\": 1,\n  },\n}\n",
		},
		{
			name:      "uninstall the only member leaves an empty object",
			uninstall: true,
			in:        "{\n  \"mcpServers\": {\n    \"mcp-sandbox\": {}\n  }\n}\n",
			out:       "{\n  \"mcpServers\": {}\n}\n",
		},
		{
			name:      "uninstall on one line",
			uninstall: true,
			in:        `{"mcpServers": {"a": 1, "mcp-sandbox": {}, "b": 2}}`,
			out:       `{"mcpServers": {"a": 1, "b": 2}}`,
		},
		{
			name: "a top level that is not an object",
			in:   "[]",
			err:  ErrStructure,
		},
		{
			name: "servers that are not an object",
			in:   `{"mcpServers": null}`,
			err:  ErrStructure,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			if tt.uninstall {
				got, err = f.uninstall([]byte(tt.in))
			} else {
				got, err = f.install([]byte(tt.in), want)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.out, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !tt.uninstall {
				raw, err := f.read(got)
				if err != nil || len(differences(raw, nil, want)) != 0 {
					t.Errorf("after install: %v, %v", differences(raw, nil, want), err)
				}
			}
		})
	}
}

func TestParseErrorPosition(t *testing.T) {
	_, err := jsonFormat{key: "mcpServers"}.read([]byte("{\n  \"a\": 1,\n  \"b\" 2\n}"))
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrParse) {
		t.Fatalf("error = %v, want a *ParseError", err)
	}
	if pe.Line != 3 || pe.Column != 7 {
		t.Errorf("position = %d:%d, want 3:7", pe.Line, pe.Column)
	}
}
