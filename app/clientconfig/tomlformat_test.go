package clientconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

func TestTOMLEdits(t *testing.T) {
	want := wantEntry("/bin/mcp-sandbox", "")
	const ours = "[mcp_servers.mcp-sandbox]\ncommand = \"/bin/mcp-sandbox\"\nargs = [\"serve\"]\n"
	tests := []struct {
		name      string
		in        string
		uninstall bool
		out       string
		err       error
	}{
		{
			name: "a quoted header is ours too",
			in:   "a = 1\n\n[ mcp_servers . \"mcp-sandbox\" ] # ours\ncommand = \"/old\"\nargs = []\n\n[b]\nc = 2\n",
			out:  "a = 1\n\n" + ours + "\n[b]\nc = 2\n",
		},
		{
			name: "a literal-quoted header",
			in:   "[mcp_servers.'mcp-sandbox']\ncommand = '/old'\n",
			out:  ours,
		},
		{
			name: "no final newline",
			in:   "model = \"o3\"",
			out:  "model = \"o3\"\n\n" + ours,
		},
		{
			name: "CRLF line endings",
			in:   "model = \"o3\"\r\n",
			out:  "model = \"o3\"\r\n\r\n" + strings.ReplaceAll(ours, "\n", "\r\n"),
		},
		{
			name: "an empty [mcp_servers] header stays",
			in:   "[mcp_servers]\n",
			out:  "[mcp_servers]\n\n" + ours,
		},
		{
			name: "other keys of our table and sub-tables are kept, inline",
			in:   "[mcp_servers.mcp-sandbox]\ncommand = \"/old\"\nenabled = false\n\n[mcp_servers.mcp-sandbox.tools.run_code]\napproval = \"never\"\n",
			out:  ours + "enabled = false\ntools = {run_code = {approval = 'never'}}\n",
		},
		{
			name: "a url entry becomes a command entry",
			in:   "[mcp_servers.mcp-sandbox]\nurl = \"http://127.0.0.1:8765/mcp\"\n",
			out:  ours,
		},
		{
			name: "a Windows path is escaped",
			in:   "",
			out:  "[mcp_servers.mcp-sandbox]\ncommand = \"C:\\\\Program Files\\\\MCP Sandbox\\\\mcp-sandbox.exe\"\nargs = [\"serve\"]\n",
		},
		{
			name:      "uninstall keeps an empty parent table",
			uninstall: true,
			in:        "[mcp_servers]\n\n[mcp_servers.mcp-sandbox]\ncommand = \"x\"\n",
			out:       "[mcp_servers]\n",
		},
		{
			name: "dotted keys are not edited",
			in:   "[mcp_servers]\nmcp-sandbox.command = \"/old\"\n",
			err:  ErrStructure,
		},
		{
			name:      "dotted keys are not removed either",
			uninstall: true,
			in:        "mcp_servers.mcp-sandbox.command = \"/old\"\n",
			err:       ErrStructure,
		},
		{
			name: "an inline table is not edited",
			in:   "mcp_servers = { mcp-sandbox = { command = \"/old\" } }\n",
			err:  ErrStructure,
		},
		{
			name: "servers that are not a table",
			in:   "mcp_servers = 1\n",
			err:  ErrStructure,
		},
		{
			name: "an array of server tables",
			in:   "[[mcp_servers]]\nname = \"x\"\n",
			err:  ErrStructure,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := want
			if strings.Contains(tt.name, "Windows") {
				w = wantEntry(`C:\Program Files\MCP Sandbox\mcp-sandbox.exe`, "")
			}
			var got []byte
			var err error
			if tt.uninstall {
				got, err = tomlFormat{}.uninstall([]byte(tt.in))
			} else {
				got, err = tomlFormat{}.install([]byte(tt.in), w)
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
		})
	}
}

func TestScanTOML(t *testing.T) {
	src := `top = "[not.a.header]"
ml = """
[also.not]
"""
lit = '''
[nor.this]'''
arr = [
  [1, 2], # [comment]
  ["[x]"],
]
[a."b.c".'d']   # a header
k = 1

# trailing comment
[[e.f]]
`
	blocks, err := scanTOML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, b := range blocks {
		got = append(got, b.key)
	}
	want := [][]string{{"a", "b.c", "d"}, {"e", "f"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if body := src[blocks[0].start:blocks[0].end]; body != "[a.\"b.c\".'d']   # a header\nk = 1\n" {
		t.Errorf("first block = %q", body)
	}
}

func TestTOMLQuoting(t *testing.T) {
	for in, want := range map[string]string{
		`C:\x`:        `"C:\\x"`,
		`say "hi"`:    `"say \"hi\""`,
		"tab\there":   `"tab\there"`,
		"bell\x07":    `"bell\u0007"`,
		"naïve":       `"naïve"`,
		"mcp-sandbox": `"mcp-sandbox"`,
	} {
		if got := config.QuoteString(in); got != want {
			t.Errorf("config.QuoteString(%q) = %s, want %s", in, got, want)
		}
		var back map[string]string
		if err := toml.Unmarshal([]byte("k = "+config.QuoteString(in)), &back); err != nil || back["k"] != in {
			t.Errorf("config.QuoteString(%q) reads back as %q, %v", in, back["k"], err)
		}
	}
}
