package traymenu

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/app/icons"
)

// outline writes a menu as one line per item: label, then [x] when
// checked, (off) when disabled, and children indented.
func outline(m *fyne.Menu, indent string) []string {
	var out []string
	for _, it := range m.Items {
		if it.IsSeparator {
			out = append(out, indent+"---")
			continue
		}
		line := indent + it.Label
		if it.Checked {
			line += " [x]"
		}
		if it.Disabled {
			line += " (off)"
		}
		out = append(out, line)
		if it.ChildMenu != nil {
			out = append(out, outline(it.ChildMenu, indent+"  ")...)
		}
	}
	return out
}

var clients = []Client{
	{Name: "claude", Display: "Claude Desktop", Installed: true, Configured: true},
	{Name: "cursor", Display: "Cursor", Installed: true},
	{Name: "zed", Display: "Zed"},
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name  string
		state State
		want  []string
		icon  icons.State
	}{
		{
			name:  "running",
			state: State{Engine: "Colima", DockerOK: true, Sandboxes: 2, Clients: clients},
			want: []string{"Docker: Colima · 2 sandboxes (off)", "---", "Stop", "Open MCP Sandbox", "Clients",
				"  Claude Desktop [x]", "  Cursor", "  Zed (not installed) (off)", "Stop all sandboxes", "---", "Quit"},
			icon: icons.Running,
		},
		{
			name:  "paused",
			state: State{Engine: "Docker Engine", DockerOK: true, Sandboxes: 1, Paused: true},
			want:  []string{"Docker: Docker Engine · 1 sandbox · stopped (off)", "---", "Start", "Open MCP Sandbox", "Clients", "Stop all sandboxes", "---", "Quit"},
			icon:  icons.Paused,
		},
		{
			name:  "no docker",
			state: State{},
			want:  []string{"Docker: not found (off)", "---", "Stop", "Open MCP Sandbox", "Clients", "Stop all sandboxes (off)", "---", "Quit"},
			icon:  icons.DockerMissing,
		},
		{
			name:  "detecting",
			state: State{Detecting: true},
			want:  []string{"Docker: looking… · 0 sandboxes (off)", "---", "Stop", "Open MCP Sandbox", "Clients", "Stop all sandboxes (off)", "---", "Quit"},
			icon:  icons.Running,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Build(tt.state, Actions{})
			if diff := cmp.Diff(tt.want, outline(m, "")); diff != "" {
				t.Errorf("menu (-want +got):\n%s", diff)
			}
			if got := Icon(tt.state); got != tt.icon {
				t.Errorf("icon %v, want %v", got, tt.icon)
			}
		})
	}
}

func TestActions(t *testing.T) {
	var got []string
	rec := func(s string) func() { return func() { got = append(got, s) } }
	a := Actions{Start: rec("start"), Stop: rec("stop"), Open: rec("open"), StopAll: rec("stopall"), Quit: rec("quit"),
		Configure: func(name string) { got = append(got, "configure "+name) }}
	click := func(m *fyne.Menu, label string) {
		for _, it := range m.Items {
			if it.Label == label {
				it.Action()
				return
			}
			if it.ChildMenu != nil {
				for _, c := range it.ChildMenu.Items {
					if c.Label == label {
						c.Action()
						return
					}
				}
			}
		}
		t.Fatalf("no item %q", label)
	}
	running := Build(State{DockerOK: true, Sandboxes: 1, Clients: clients}, a)
	for _, l := range []string{LabelStop, LabelOpen, LabelStopAll, "Cursor", LabelQuit} {
		click(running, l)
	}
	click(Build(State{DockerOK: true, Paused: true}, a), LabelStart)
	if want := "stop open stopall configure cursor quit start"; strings.Join(got, " ") != want {
		t.Errorf("actions %q, want %q", strings.Join(got, " "), want)
	}
}
