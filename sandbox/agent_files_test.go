package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
)

// The classes an agent reports become the tools' errors, and a message
// from the agent never passes as a path outside the areas.
func TestAgentFileErrClasses(t *testing.T) {
	sb := &Sandbox{}
	for _, tc := range []struct {
		d    agent.FileDone
		want error
	}{
		{agent.FileDone{Err: "notexist", Msg: "/workspace/x"}, ErrInvalid},
		{agent.FileDone{Err: "perm", Msg: "/workspace/x"}, ErrPolicy},
		{agent.FileDone{Err: "linkout", Msg: "/workspace/l\x00/etc"}, ErrPolicy},
		{agent.FileDone{Err: "linkout", Msg: "/workspace/l"}, ErrPolicy},
		{agent.FileDone{Err: "nospace"}, ErrPolicy},
		{agent.FileDone{Err: "isdir", Path: "/workspace/d"}, ErrInvalid},
		{agent.FileDone{Err: "toobig"}, ErrInvalid},
	} {
		if err := agentFileErr(sb, "read", "/workspace/x", tc.d); !errors.Is(err, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.d, err, tc.want)
		}
	}
	err := agentFileErr(sb, "read", "/workspace/x", agent.FileDone{Err: "notexist", Msg: "/etc/shadow"})
	if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "/etc/shadow") {
		t.Errorf("a path outside the areas from the agent: %v", err)
	}
}
