package traymenu

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// outline writes a menu as one line per item: label, then [x] when
// checked, (off) when disabled, and children indented.
func outline(items []Item, indent string) []string {
	var out []string
	for _, it := range items {
		if it.Hidden {
			continue
		}
		if it.Separator {
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
		out = append(out, outline(it.Children, indent+"  ")...)
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
		icon  string
	}{
		{
			name:  "running",
			state: State{Engine: "Colima", DockerOK: true, Sandboxes: 2, Clients: clients},
			want: []string{"Docker: Colima · 2 sandboxes (off)", "---", "Pause", "  Servers refuse new sandboxes until you choose Start (off)", "  Stop 2 sandboxes and pause", "Open MCP Sandbox", "Clients",
				"  Claude Desktop [x]", "  Cursor", "  Zed (not installed) (off)", "Stop all sandboxes", "  Their files in /workspace are gone for good (off)", "  Stop 2 sandboxes", "Check for updates", "---", "Quit"},
			icon: assets.Running,
		},
		{
			name:  "paused",
			state: State{Engine: "Docker Engine", DockerOK: true, Sandboxes: 1, Paused: true},
			want:  []string{"Docker: Docker Engine · 1 sandbox · Paused (off)", "---", "Start", "Open MCP Sandbox", "Clients", "Stop all sandboxes", "  Their files in /workspace are gone for good (off)", "  Stop 1 sandbox", "Check for updates", "---", "Quit"},
			icon:  assets.Paused,
		},
		{
			name:  "no docker",
			state: State{},
			want:  []string{"Docker: not reachable (off)", "---", "Pause", "  Servers refuse new sandboxes until you choose Start (off)", "  Pause now", "Open MCP Sandbox", "Clients", "Stop all sandboxes (off)", "  Their files in /workspace are gone for good (off)", "  Stop 0 sandboxes", "Check for updates", "---", "Quit"},
			icon:  assets.DockerMissing,
		},
		{
			name:  "from a disk image",
			state: State{Engine: "Docker Desktop", DockerOK: true, MoveOffered: true},
			want: []string{"Docker: Docker Desktop · 0 sandboxes (off)", "---", "Pause", "  Servers refuse new sandboxes until you choose Start (off)", "  Pause now (no sandbox runs)", "Open MCP Sandbox", "Clients",
				"Stop all sandboxes (off)", "  Their files in /workspace are gone for good (off)", "  Stop 0 sandboxes", "Check for updates", "Move to Applications…", "---", "Quit"},
			icon: assets.Running,
		},
		{
			name:  "detecting",
			state: State{Detecting: true},
			want:  []string{"Docker: looking… (off)", "---", "Pause", "  Servers refuse new sandboxes until you choose Start (off)", "  Pause now", "Open MCP Sandbox", "Clients", "Stop all sandboxes (off)", "  Their files in /workspace are gone for good (off)", "  Stop 0 sandboxes", "Check for updates", "---", "Quit"},
			icon:  assets.Running,
		},
		{
			name:  "with the HTTP server and a warm pool",
			state: State{Engine: "Colima", DockerOK: true, Sandboxes: 1, Warm: 2, HTTP: true},
			want: []string{"Docker: Colima · 1 sandbox · 2 warm (off)", "---", "Pause", "  Servers refuse new sandboxes until you choose Start (off)", "  Stop 1 sandbox and the HTTP server, then pause", "Open MCP Sandbox", "Clients",
				"Stop all sandboxes", "  Their files in /workspace are gone for good (off)", "  Stop 1 sandbox", "Check for updates", "---", "Quit"},
			icon: assets.Running,
		},
		{
			name:  "bash cannot run",
			state: State{Engine: "Colima", DockerOK: true, Attention: "code in bash cannot run"},
			want: []string{"Docker: Colima · 0 sandboxes (off)", "Needs attention: code in bash cannot run — open for the fix", "---", "Pause", "  Servers refuse new sandboxes until you choose Start (off)", "  Pause now (no sandbox runs)", "Open MCP Sandbox", "Clients",
				"Stop all sandboxes (off)", "  Their files in /workspace are gone for good (off)", "  Stop 0 sandboxes", "Check for updates", "---", "Quit"},
			icon: assets.Running,
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
	a := Actions{Start: rec("start"), Pause: rec("pause"), CheckUpdates: rec("updates"), Install: rec("install"), Move: rec("move"), Open: rec("open"), StopAll: rec("stopall"), Quit: rec("quit"),
		Configure: func(name string) { got = append(got, "configure "+name) }}
	click := func(m []Item, label string) {
		for _, it := range m {
			if it.Label == label && !it.Hidden {
				it.Action()
				return
			}
			for _, c := range it.Children {
				if c.Label == label {
					c.Action()
					return
				}
			}
		}
		t.Fatalf("no item %q", label)
	}
	running := Build(State{DockerOK: true, Sandboxes: 1, Clients: clients, Offer: "1.2.3"}, a)
	for _, l := range []string{"Stop 1 sandbox and pause", LabelOpen, StopAllConfirmLabel(State{Sandboxes: 1}), "Cursor", LabelCheckUpdates, InstallLabel("1.2.3"), LabelQuit} {
		click(running, l)
	}
	click(Build(State{DockerOK: true, Paused: true}, a), LabelStart)
	click(Build(State{DockerOK: true, MoveOffered: true}, a), LabelMove)
	if want := "pause open stopall configure cursor updates install quit start move"; strings.Join(got, " ") != want {
		t.Errorf("actions %q, want %q", strings.Join(got, " "), want)
	}
}

// The tray item's title carries the product and its state, and paused is
// the same word everywhere.
func TestTitle(t *testing.T) {
	for _, tc := range []struct {
		s    State
		want string
	}{
		{State{DockerOK: true, Sandboxes: 3}, "MCP Sandbox — 3 sandboxes"},
		{State{DockerOK: true, Sandboxes: 1}, "MCP Sandbox — 1 sandbox"},
		{State{DockerOK: true, Sandboxes: 2, Warm: 1}, "MCP Sandbox — 2 sandboxes · 1 warm"},
		{State{DockerOK: true, Paused: true}, "MCP Sandbox — Paused"},
		{State{}, "MCP Sandbox — Docker not reachable"},
		{State{DockerOK: true, Sandboxes: 1, Attention: "code in bash cannot run"}, "MCP Sandbox — Needs attention: code in bash cannot run"},
		{State{DockerOK: true, Sandboxes: 1, Questions: []Question{{ID: "a"}}}, "MCP Sandbox — 1 sandbox · 1 question waiting"},
		{State{DockerOK: true, Attention: "code in bash cannot run", Questions: []Question{{ID: "a"}, {ID: "b"}}}, "MCP Sandbox — Needs attention: code in bash cannot run · 2 questions waiting"},
		{State{DockerOK: true, Sandboxes: 1, Proposals: 1}, "MCP Sandbox — 1 sandbox · 1 change waiting for review"},
	} {
		if got := Title(tc.s); got != tc.want {
			t.Errorf("Title(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
	if !strings.Contains(StatusLine(State{DockerOK: true, Paused: true}), PausedWord) {
		t.Errorf("the status line does not say %q", PausedWord)
	}
}

// TestProposalsItem: the item shows only while changes wait for review,
// and opens the window on them.
func TestProposalsItem(t *testing.T) {
	find := func(s State, a Actions) *Item {
		for _, it := range Build(s, a) {
			if strings.Contains(it.Label, "waiting for review") {
				return &it
			}
		}
		return nil
	}
	if it := find(State{DockerOK: true}, Actions{}); it == nil || !it.Hidden {
		t.Errorf("with nothing to review: %+v", it)
	}
	reviewed := false
	it := find(State{DockerOK: true, Proposals: 2}, Actions{Review: func() { reviewed = true }})
	if it == nil || it.Hidden || it.Label != "2 changes waiting for review" || it.Action == nil {
		t.Fatalf("with 2 to review: %+v", it)
	}
	it.Action()
	if !reviewed {
		t.Error("the item does not open the review")
	}
}

// TestQuestions: each waiting question shows its text and three choices
// that answer it by id; the item is hidden while nothing waits.
func TestQuestions(t *testing.T) {
	var got []string
	a := Actions{Answer: func(id, choice string) { got = append(got, id+" "+choice) }}
	if it := Build(State{DockerOK: true}, a)[3]; !it.Hidden || len(it.Children) != 0 {
		t.Errorf("with no question: %+v", it)
	}
	qs := []Question{
		{ID: "q1", Text: "Sandbox 3f2a9c01… (python, Claude Desktop) wants to reach pypi.org:443.", Entries: "pypi.org:443"},
		{ID: "q2", Text: "Cursor asks for a new node sandbox that may reach a.example:443.", Entries: "a.example:443"},
	}
	m := Build(State{DockerOK: true, Questions: qs}, a)
	want := []string{
		"2 sandboxes wait for your answer",
		"  " + qs[0].Text + " (off)",
		"  Allow pypi.org:443 for this sandbox",
		"  Always allow pypi.org:443",
		"  Deny pypi.org:443",
		"  " + qs[1].Text + " (off)",
		"  Allow a.example:443 for this sandbox",
		"  Always allow a.example:443",
		"  Deny a.example:443",
	}
	if diff := cmp.Diff(want, outline(m[3:4], "")); diff != "" {
		t.Errorf("questions item (-want +got):\n%s", diff)
	}
	for _, i := range []int{1, 2, 3, 5, 6, 7} {
		m[3].Children[i].Action()
	}
	if want := "q1 allow|q1 always|q1 deny|q2 allow|q2 always|q2 deny"; strings.Join(got, "|") != want {
		t.Errorf("answers %q, want %q", strings.Join(got, "|"), want)
	}
}

// On Kubernetes the status line and the title name the cluster and
// namespace where Docker's engine would be, and a cluster that does not
// answer says so, never in Docker's words.
func TestClusterWording(t *testing.T) {
	place := "cluster prod · namespace sb"
	for _, tc := range []struct {
		s           State
		line, title string
	}{
		{State{Cluster: true, Detecting: true, Engine: place}, "Kubernetes: connecting…", "MCP Sandbox — connecting to the Kubernetes cluster"},
		{State{Cluster: true, Engine: place}, "Kubernetes: cluster prod · namespace sb not reachable", "MCP Sandbox — Kubernetes cluster not reachable"},
		{State{Cluster: true, DockerOK: true, Engine: place, Sandboxes: 2}, "Kubernetes: cluster prod · namespace sb · 2 sandboxes", "MCP Sandbox — 2 sandboxes"},
	} {
		line, title := StatusLine(tc.s), Title(tc.s)
		if !strings.HasPrefix(line, tc.line) || title != tc.title || strings.Contains(line+title, "Docker") {
			t.Errorf("%+v: line %q title %q, want %q and %q", tc.s, line, title, tc.line, tc.title)
		}
	}
}

// A question with entries that reach the person's own machine shows a
// warning line for each, and its Always saves only the others (or is not
// offered when there are none).
func TestQuestionWarnings(t *testing.T) {
	mixed := Question{ID: "q1", Text: "Sandbox 3f2a… wants to reach pypi.org:443, 127.0.0.1:8080.", Entries: "pypi.org:443, 127.0.0.1:8080",
		Warnings: []string{"⚠ 127.0.0.1:8080: loopback: it reaches your own machine or network"}, Saved: "pypi.org:443"}
	onlyRisky := Question{ID: "q2", Text: "Sandbox 9c01… wants to reach 169.254.169.254:80.", Entries: "169.254.169.254:80",
		Warnings: []string{"⚠ 169.254.169.254:80: metadata: it reaches your own machine or network"}}
	m := Build(State{DockerOK: true, Questions: []Question{mixed, onlyRisky}}, Actions{})
	want := []string{
		"2 sandboxes wait for your answer",
		"  " + mixed.Text + " (off)",
		"  " + mixed.Warnings[0] + " (off)",
		"  Allow pypi.org:443, 127.0.0.1:8080 for this sandbox",
		"  Always allow pypi.org:443 (the rest for this sandbox only)",
		"  Deny pypi.org:443, 127.0.0.1:8080",
		"  " + onlyRisky.Text + " (off)",
		"  " + onlyRisky.Warnings[0] + " (off)",
		"  Allow 169.254.169.254:80 for this sandbox",
		"  Deny 169.254.169.254:80",
	}
	if diff := cmp.Diff(want, outline(m[3:4], "")); diff != "" {
		t.Errorf("questions item (-want +got):\n%s", diff)
	}
}
