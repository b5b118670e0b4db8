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
	// (when DOCKER_HOST or a context is set), then the known places in
	// order of preference.
	Candidates []Candidate `json:"candidates"`
	// Reason says in plain words why Chosen was chosen, or that none
	// answered.
	Reason string `json:"reason"`
	// Hint says what to do when no engine answered, or when the explicit
	// choice did not answer and another engine stands in for it.
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

// Detect finds the Docker endpoint to use. It reads the explicit choice
// (DOCKER_HOST, DOCKER_CONTEXT, the current docker context) and probes every
// known place concurrently, each ping bounded by Options.Timeout, so with
// nothing running it returns within about that timeout.
//
// The explicit choice wins when it answers. When it does not, it is still
// reported first, with its error, and the first known place that answers is
// chosen; Reason and Hint say that the explicit choice was passed over.
// Detect never fails: a Result with a nil Chosen says that nothing answered.
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
	var explicit *Candidate
	if len(r.Candidates) > 0 && r.Candidates[0].Explicit {
		explicit = &r.Candidates[0]
	}
	if explicit != nil && explicit.OK {
		r.Chosen = explicit
		r.Reason = fmt.Sprintf("%s is used because %s, and it answered (%s)", explicit.label(), explicit.why, explicit.product())
		return
	}
	var others []string
	for i := range r.Candidates {
		c := &r.Candidates[i]
		switch {
		case !c.OK:
		case r.Chosen == nil:
			r.Chosen = c
		default:
			others = append(others, c.Source)
		}
	}
	var b strings.Builder
	switch {
	case explicit != nil && r.Chosen != nil:
		fmt.Fprintf(&b, "%s was chosen because %s, but it is not usable (%s); %s answered (%s) and is used instead, as the first known place that did",
			explicit.label(), explicit.why, explicit.Error, r.Chosen.label(), r.Chosen.product())
	case r.Chosen != nil:
		fmt.Fprintf(&b, "neither DOCKER_HOST nor a docker context is set; %s is the first known place that answered (%s)",
			r.Chosen.label(), r.Chosen.product())
	case explicit != nil:
		fmt.Fprintf(&b, "%s was chosen because %s, but it is not usable (%s), and no known place answered either", explicit.label(), explicit.why, explicit.Error)
	default:
		b.WriteString("neither DOCKER_HOST nor a docker context is set, and no known place answered")
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, "; also answering: %s", strings.Join(others, ", "))
	}
	r.Reason = b.String()
	r.Hint = r.hint(s, explicit)
}

// product names the engine and version, such as "Colima 27.1.1".
func (c *Candidate) product() string {
	return strings.TrimSpace(c.Engine + " " + c.Version)
}

// NewClient detects the endpoint and builds a Docker client for it. When no
// engine answered, the error wraps ErrNoEngine and carries the hint; the
// Result is returned in every case, for the caller to report.
func NewClient(ctx context.Context, opts Options) (*client.Client, *Result, error) {
	r := Detect(ctx, opts)
	if r.Chosen == nil {
		return nil, r, fmt.Errorf("%w: %s", ErrNoEngine, r.Hint)
	}
	cli, err := client.NewClientWithOpts(r.Chosen.ClientOptions()...)
	if err != nil {
		return nil, r, fmt.Errorf("build docker client for %s: %w", r.Chosen.Host, err)
	}
	return cli, r, nil
}
