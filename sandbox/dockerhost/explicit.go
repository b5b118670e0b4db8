package dockerhost

import (
	"fmt"
	"strings"
)

// ErrExplicitUnreachable is returned (wrapped, with the hint) by NewClient
// when the user chose an endpoint (docker.host, DOCKER_HOST, a docker
// context) and it does not answer, or cannot be read. No other engine
// stands in for it: the choice may name another user's or another
// machine's engine on purpose, and sandboxes started elsewhere would escape
// what the user meant. It matches ErrNoEngine too, since no engine is used.
var ErrExplicitUnreachable error = explicitUnreachable{}

type explicitUnreachable struct{}

func (explicitUnreachable) Error() string {
	return "the explicitly chosen docker endpoint is not usable"
}

// Is makes errors.Is(err, ErrNoEngine) hold for ErrExplicitUnreachable.
func (explicitUnreachable) Is(target error) bool { return target == ErrNoEngine }

// Explicit returns the endpoint the user chose, or nil when detection was
// left to pick one. When it is not nil, it is Chosen or nothing is.
func (r *Result) Explicit() *Candidate {
	if len(r.Candidates) > 0 && r.Candidates[0].Explicit {
		return &r.Candidates[0]
	}
	return nil
}

// Choice names an explicit endpoint and where it was chosen, for messages:
// "DOCKER_HOST=unix:///x.sock (from the environment)", `docker.host =
// "tcp://box:2376" (in /home/me/.config/mcp-sandbox/config.toml)`, "the
// docker context "colima" at unix:///… (DOCKER_CONTEXT names it)". For a
// detected endpoint it is the host.
func (c *Candidate) Choice() string {
	if c.choice == "" {
		return c.Host
	}
	return c.choice
}

// Remedy says what to do when an explicit endpoint does not answer: start
// its engine (or fix the choice, when it cannot be read), or give up the
// choice so that detection runs. It is "" for a detected endpoint.
func (c *Candidate) Remedy() string {
	if !c.Explicit {
		return ""
	}
	do := "start that engine"
	if c.invalid {
		do = "fix it"
	}
	if c.undo == "" {
		return do
	}
	return do + ", or " + c.undo
}

// unanswered is the hint for an explicit endpoint that is not used.
func (c *Candidate) unanswered() string {
	return fmt.Sprintf("%s %s; %s.", c.Choice(), c.failure(), c.Remedy())
}

// failure says in one phrase how an explicit endpoint failed: "does not
// answer: no socket at /x.sock", "does not answer within 2s", "cannot be
// used: invalid docker host …".
func (c *Candidate) failure() string {
	if c.invalid {
		return "cannot be used: " + c.Error
	}
	if rest, ok := strings.CutPrefix(c.Error, "did not answer"); ok {
		return "does not answer" + rest
	}
	return "does not answer: " + c.Error
}
