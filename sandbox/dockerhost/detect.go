package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docker/docker/client"
)

// ErrNoEngine is returned (wrapped, with the hint) by NewClient when no
// Docker engine answered.
var ErrNoEngine = errors.New("no docker engine answered")

// Result is what Detect found.
type Result struct {
	// Chosen is the endpoint to use; nil when none answered. It points
	// into Candidates.
	Chosen *Candidate `json:"chosen"`
	// Candidates lists every endpoint considered: the explicit one first
	// (when docker.host, DOCKER_HOST or a context is set), then the known
	// places in order of preference.
	Candidates []Candidate `json:"candidates"`
	// Reason says in plain words why Chosen was chosen, or that none
	// answered.
	Reason string `json:"reason"`
	// Hint says what to do when nothing is used: how to make the explicit
	// choice answer or give it up, or how to start an engine.
	Hint string `json:"hint,omitempty"`
}

// Shown splits the candidates for a person to read: those worth a line of
// their own, and the local socket paths where nothing exists (probed
// places, not the user's explicit choice), which read best as one list.
func (r *Result) Shown() (listed []*Candidate, absent []string) {
	for i := range r.Candidates {
		c := &r.Candidates[i]
		if c.Missing && !c.Explicit {
			absent = append(absent, strings.TrimPrefix(c.Host, "unix://"))
			continue
		}
		listed = append(listed, c)
	}
	return listed, absent
}

// Detect finds the Docker endpoint to use, by the one rule that the server,
// the CLI, the doctor and the tray all follow. It reads the explicit choice
// (Options.ConfigHost, DOCKER_HOST, DOCKER_CONTEXT, the current docker
// context) and pings it and every known place concurrently, each ping
// bounded by Options.Timeout, so with nothing running it returns within
// about that timeout.
//
// An explicit choice is used when it answers its ping, and otherwise
// nothing is: Chosen is nil, and Reason and Hint name the choice, where it
// was made and what to do. The known places are still probed and listed,
// for the doctor's report, but never chosen in its place. Only when nothing
// was chosen explicitly is the first known place that answers chosen.
// Detect never fails: a Result with a nil Chosen says that nothing is used.
func Detect(ctx context.Context, opts Options) *Result {
	s := opts.settings()
	var cands []Candidate
	explicit := s.explicit()
	if explicit != nil {
		cands = append(cands, *explicit)
	}
	for _, c := range s.knownPlaces() {
		if explicit == nil || c.Host != explicit.Host {
			cands = append(cands, c)
		}
	}
	s.probeAll(ctx, cands)
	r := &Result{Candidates: cands}
	r.choose(s)
	return r
}

// choose picks the endpoint and words the reason and hint.
func (r *Result) choose(s settings) {
	explicit := r.Explicit()
	if explicit != nil && explicit.OK {
		r.Chosen = explicit
		r.Reason = fmt.Sprintf("%s is used because %s, and it answered (%s)", explicit.label(), explicit.why, explicit.Product())
		return
	}
	var answering []string
	for i := range r.Candidates {
		c := &r.Candidates[i]
		switch {
		case !c.OK:
		case r.Chosen == nil && explicit == nil:
			r.Chosen = c
		default:
			answering = append(answering, c.Source)
		}
	}
	var b strings.Builder
	switch {
	case explicit != nil:
		fmt.Fprintf(&b, "%s was chosen because %s, but it %s; no other engine is used in its place",
			explicit.label(), explicit.why, explicit.failure())
	case r.Chosen != nil:
		fmt.Fprintf(&b, "neither docker.host, DOCKER_HOST nor a docker context is set; %s is the first known place that answered (%s)",
			r.Chosen.label(), r.Chosen.Product())
	default:
		b.WriteString("neither docker.host, DOCKER_HOST nor a docker context is set, and no known place answered")
	}
	if len(answering) > 0 {
		fmt.Fprintf(&b, "; also answering: %s", strings.Join(answering, ", "))
	}
	r.Reason = b.String()
	switch {
	case explicit != nil:
		r.Hint = explicit.unanswered()
	case r.Chosen == nil:
		r.Hint = r.hint(s)
	}
}

// Product names the engine behind the endpoint and its version, such as
// "Colima 27.4.0", or says in plain words what is not known yet and why.
func (c *Candidate) Product() string {
	switch {
	case c.Unidentified == "":
		return strings.TrimSpace(c.Engine + " " + c.Version)
	case c.Engine != "" && c.Engine != "unknown":
		return c.Engine + ", version not known yet: " + c.Unidentified
	default:
		return "engine and version not known yet: " + c.Unidentified
	}
}

// NewClient detects the endpoint and builds a Docker client for it. When
// the explicit choice does not answer, the error wraps
// ErrExplicitUnreachable (which matches ErrNoEngine too); when nothing was
// chosen and no known place answered, it wraps ErrNoEngine. Either carries
// the hint. The Result is returned in every case, for the caller to report.
func NewClient(ctx context.Context, opts Options) (*client.Client, *Result, error) {
	r := Detect(ctx, opts)
	if r.Chosen == nil {
		if r.Explicit() != nil {
			return nil, r, fmt.Errorf("%w: %s", ErrExplicitUnreachable, r.Hint)
		}
		return nil, r, fmt.Errorf("%w: %s", ErrNoEngine, r.Hint)
	}
	cli, err := client.NewClientWithOpts(r.Chosen.ClientOptions()...)
	if err != nil {
		return nil, r, fmt.Errorf("build docker client for %s: %w", r.Chosen.Host, err)
	}
	return cli, r, nil
}
