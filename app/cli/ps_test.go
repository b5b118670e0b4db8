package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestPSCannotBeForged: labels are anyone's to set who reaches the engine
// (and the client label is what an MCP client called itself), yet no
// value makes `ps --all` print another row, another column, or a
// terminal escape.
func TestPSCannotBeForged(t *testing.T) {
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	be := fake.New()
	hostile := []map[string]string{
		{backend.LabelID: "aaaa1111", backend.LabelInstallation: inst,
			backend.LabelClient: "claude\nbbbb2222  mallory  python  fake/busybox:1  1s  0.0%  0/512 MB  0/256  none  in 1h  this"},
		{backend.LabelID: "cccc3333", backend.LabelInstallation: "someone-else",
			backend.LabelClient: "\x1b[2J\x1b[1;1H\x1b]0;pwned\x07", backend.LabelLanguage: "py\tthon\r\n", backend.LabelNetwork: "none\u202e"},
		{backend.LabelID: "dddd\n4444", backend.LabelClient: "x\u2028y"},
	}
	for _, l := range hostile {
		l[backend.LabelManaged] = "true"
		be.Put(backend.ContainerSpec{Name: backend.ContainerName("x"), Image: fake.DefaultImage, Labels: l})
	}
	infos, err := inventory.Lister{Backend: be, State: st, All: true}.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	writePS(&out, infos, true)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 1+len(hostile) {
		t.Errorf("%d lines for %d sandboxes:\n%s", len(lines), len(hostile), out.String())
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\r\t\u202e\u2028") {
		t.Errorf("ps printed a control or format character: %q", out.String())
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) == 0 || strings.Contains(l, "bbbb2222") && f[0] != "aaaa1111" {
			t.Errorf("forged row: %q", l)
		}
	}
	mine := 0
	for _, in := range infos {
		if in.Mine {
			mine++
		}
	}
	if mine != 1 {
		t.Errorf("%d sandboxes marked this installation's, want 1: %+v", mine, infos)
	}
}

// TestStopTargets: what `stop` acts on, and which of those are others'
// (they need --all-users and a confirmation).
func TestStopTargets(t *testing.T) {
	infos := []inventory.Info{{ID: "mine1", Mine: true}, {ID: "mine2", Mine: true}, {ID: "other1"}, {ID: "other2"}}
	tests := []struct {
		name          string
		ids           []string
		all, allUsers bool
		want          string
		others, left  int
	}{
		{"--all", nil, true, false, "mine1,mine2", 0, 2},
		{"--all --all-users", nil, true, true, "mine1,mine2,other1,other2", 2, 0},
		{"own id", []string{"mine1"}, false, false, "mine1", 0, 0},
		{"other's id", []string{"other1"}, false, false, "other1", 0, 0},
		{"other's id --all-users", []string{"other1", "mine2"}, false, true, "other1,mine2", 1, 0},
		{"unknown id", []string{"nosuch1"}, false, true, "nosuch1", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, others, left := stopTargets(infos, tt.ids, tt.all, tt.allUsers)
			if strings.Join(got, ",") != tt.want || others != tt.others || left != tt.left {
				t.Errorf("stopTargets = %v, %d others, %d left; want %s, %d, %d", got, others, left, tt.want, tt.others, tt.left)
			}
		})
	}
}

// TestConfirmOthers: --yes answers for a script, a terminal is asked
// (only y or yes is a yes), and without either nothing is stopped.
func TestConfirmOthers(t *testing.T) {
	tests := []struct {
		name      string
		yes, tty  bool
		answer    string
		want      bool
		stderrHas string
	}{
		{"--yes", true, false, "", true, ""},
		{"terminal, y", false, true, "y\n", true, "[y/N]"},
		{"terminal, YES", false, true, "YES\n", true, "[y/N]"},
		{"terminal, enter", false, true, "\n", false, "nothing stopped"},
		{"terminal, n", false, true, "n\n", false, "nothing stopped"},
		{"terminal, end of input", false, true, "", false, "nothing stopped"},
		{"no terminal, no --yes", false, false, "y\n", false, "run it in a terminal, or add --yes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errb bytes.Buffer
			e := &Env{Stdin: strings.NewReader(tt.answer), Stderr: &errb, Interactive: func() bool { return tt.tty }}
			if got := confirmOthers(e, 2, tt.yes); got != tt.want {
				t.Errorf("confirmOthers = %v, want %v (stderr %q)", got, tt.want, errb.String())
			}
			if !strings.Contains(errb.String(), tt.stderrHas) {
				t.Errorf("stderr %q lacks %q", errb.String(), tt.stderrHas)
			}
		})
	}
}
