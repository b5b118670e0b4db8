package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// What an agent says about a listing is hostile: entries that leave the
// directory listed, claim to be below a subdirectory of a flat listing,
// or break the bounds are an invalid answer, never data.
func TestAgentListingEntriesChecked(t *testing.T) {
	for _, tc := range []struct {
		name      string
		e         agent.ListEntry
		recursive bool
	}{
		{"climbs out", agent.ListEntry{P: "../etc/passwd"}, true},
		{"climbs out at once", agent.ListEntry{P: ".."}, true},
		{"absolute", agent.ListEntry{P: "/etc/passwd"}, true},
		{"not clean", agent.ListEntry{P: "a/../../b"}, true},
		{"below a subdirectory of a flat listing", agent.ListEntry{P: "a/b"}, false},
		{"NUL", agent.ListEntry{P: "a\x00b"}, true},
		{"negative size", agent.ListEntry{P: "a", S: -1}, true},
		{"link target on a file", agent.ListEntry{P: "a", L: "/etc"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fe, err := entryOf("/workspace/d", tc.e, tc.recursive); !errors.Is(err, ErrBadAnswer) {
				t.Errorf("got %+v %v, want an invalid answer", fe, err)
			}
		})
	}
	fe, err := entryOf("/workspace/d", agent.ListEntry{P: "sub/l", M: uint32(fs.ModeSymlink | 0o777), T: 86400, L: "../x"}, true)
	want := backend.FileEntry{Path: "/workspace/d/sub/l", Mode: "Lrwxrwxrwx", Modified: "1970-01-02T00:00:00Z", Link: "../x"}
	if err != nil || fe != want {
		t.Errorf("a good entry: %+v %v, want %+v", fe, err, want)
	}
	fe, err = entryOf("/workspace/d", agent.ListEntry{P: "sub", S: 4096, M: uint32(fs.ModeDir | 0o755)}, false)
	if err != nil || !fe.IsDir || fe.Size != 0 || fe.Mode != "drwxr-xr-x" {
		t.Errorf("a directory: %+v %v", fe, err)
	}
}

// An answer of the wrong kind (an exit for a file request, a filedone for
// a command) is impossible: it ends the agent, as a malformed frame does;
// the right kind is delivered.
func TestAgentWrongKindOfAnswerEndsIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		call    *agentCall
		kind    string
		payload string
		ends    bool
	}{
		{"exit for a command", &agentCall{exit: make(chan agent.Exit, 1)}, agent.KindExit, `{"id":1,"code":0}`, false},
		{"filedone for a file request", &agentCall{file: make(chan agent.FileDone, 1)}, agent.KindFileDone, `{"id":1,"path":"/workspace"}`, false},
		{"exit for a file request", &agentCall{file: make(chan agent.FileDone, 1)}, agent.KindExit, `{"id":1,"code":0}`, true},
		{"filedone for a command", &agentCall{exit: make(chan agent.Exit, 1)}, agent.KindFileDone, `{"id":1,"path":"/workspace"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Conn{dead: make(chan struct{}), calls: map[int]*agentCall{}}
			if id := c.register(tc.call); id != 1 {
				t.Fatalf("id %d", id)
			}
			c.onFrame(runner.Frame{Kind: tc.kind, Payload: []byte(tc.payload)})
			if c.Gone() != tc.ends {
				t.Errorf("agent ended: %v, want %v (%v)", c.Gone(), tc.ends, c.deadErr)
			}
			delivered := len(tc.call.exit)+len(tc.call.file) == 1
			if delivered == tc.ends {
				t.Errorf("answer delivered: %v", delivered)
			}
		})
	}
}

// answerFile answers the server's next file request with out (as output
// frames) and done.
func (f *fakeAgent) answerFile(out string, done agent.FileDone) agent.File {
	f.t.Helper()
	var req agent.File
	if err := json.Unmarshal(f.next(agent.KindFile).Payload, &req); err != nil {
		f.t.Fatal(err)
	}
	if out != "" {
		f.say(runner.KindOut, strconv.Itoa(req.ID)+"\n"+out)
	}
	done.ID = req.ID
	f.sayJSON(agent.KindFileDone, done)
	return req
}

// A file answer is checked before it is data: a read whose bytes do not
// match the size it reports, or whose path leaves the areas, is an
// invalid answer and ends the connection; a good one is delivered.
func TestFileAnswerChecked(t *testing.T) {
	read := FileRequest{File: agent.File{Op: agent.OpRead, Path: "/workspace/a", Max: 100}, Timeout: time.Minute}
	for _, tc := range []struct {
		name string
		out  string
		done agent.FileDone
		bad  bool
	}{
		{"good", "hello", agent.FileDone{Path: "/workspace/a", Size: 5, N: 5}, false},
		{"more than reported", "hello", agent.FileDone{Path: "/workspace/a", Size: 5, N: 3}, true},
		{"a path outside", "hello", agent.FileDone{Path: "/etc/shadow", Size: 5, N: 5}, true},
		{"not clean", "", agent.FileDone{Path: "/workspace/../etc", N: 0}, true},
		{"more than asked for", strings.Repeat("x", 101), agent.FileDone{Path: "/workspace/a", N: 101}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestConn(t)
			type answer struct {
				r   FileResult
				err error
			}
			ch := make(chan answer, 1)
			go func() {
				r, err := f.c.File(context.Background(), read)
				ch <- answer{r, err}
			}()
			f.answerFile(tc.out, tc.done)
			a := <-ch
			if tc.bad != errors.Is(a.err, ErrBadAnswer) || tc.bad != f.c.Gone() {
				t.Fatalf("got %+v %v (connection ended: %v), want bad %v", a.r, a.err, f.c.Gone(), tc.bad)
			}
			if !tc.bad && string(a.r.Data) != tc.out {
				t.Errorf("data %q", a.r.Data)
			}
		})
	}
}

func TestInAreas(t *testing.T) {
	for p, want := range map[string]bool{
		"/workspace": true, "/workspace/a/b": true, "/tmp/x": true,
		"/workspacex": false, "/etc": false, "workspace/a": false, "/workspace/../etc": false,
		"/workspace/a/": false, "/tmp/a\nb": false, "": false,
	} {
		if InAreas(p) != want {
			t.Errorf("InAreas(%q) = %v", p, !want)
		}
	}
}
