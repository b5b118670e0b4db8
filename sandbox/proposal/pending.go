package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Pending proposals travel between the server and the tray and window
// (other processes) as the network questions do (state/asks.go): files in
// the state directory, written atomically by one side and read as
// hostile-shaped by the other (state.ReadJSONFile), the answer a
// state.Answer (allow: apply; deny: reject), ids from state.NewAskID:
//
//	proposals/<id>/proposal.json  the Proposal, without the new content
//	proposals/<id>/new/<n>        the new content of Files[n]
//	proposals/<id>/answer.json    the person's state.Answer
//
// A proposal's folder is made under a temporary name and renamed into
// place, so a reader sees all of it or nothing. No answer by the
// deadline is a reject; Sweep removes what is past it.

// ProposalsDir is the proposals folder's name in the state directory.
const ProposalsDir = "proposals"

// Bounds on what the state directory holds.
const (
	MaxPending      = 16
	maxProposalJSON = 4 << 20
	// maxPendingBytes bounds all pending proposals' files together.
	maxPendingBytes = 128 << 20
)

// ErrFull is returned by Save when MaxPending proposals wait already.
var ErrFull = errors.New("too many proposals wait for review")

// The sides of a pending proposal that apply it once the person says yes.
const (
	// ByServer: the server that asked waits for the answer and applies.
	ByServer = "server"
	// ByWindow: the call returned pending; the window applies.
	ByWindow = "window"
)

var validID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func proposalsDir(st *state.Store) string { return filepath.Join(st.Dir(), ProposalsDir) }

// Dir makes the proposals folder of st if it is missing and returns it,
// for those that watch it (the tray, the window).
func Dir(st *state.Store) (string, error) {
	dir := proposalsDir(st)
	return dir, os.MkdirAll(dir, 0o700)
}

func folder(st *state.Store, id string) (string, error) {
	if !validID.MatchString(id) {
		return "", fmt.Errorf("%w: proposal id %q", state.ErrAsk, id)
	}
	return filepath.Join(proposalsDir(st), id), nil
}

// Save writes p (with its new content) for the tray and the window.
func Save(st *state.Store, p *Proposal) error {
	dir, err := folder(st, p.ID)
	if err != nil {
		return err
	}
	Sweep(st, time.Now())
	if n := len(list(st)); n >= MaxPending {
		return fmt.Errorf("%w: %d wait already; ask the person to review them in the MCP Sandbox window", ErrFull, n)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("save proposal: %w", err)
	}
	if len(b) > maxProposalJSON {
		return fmt.Errorf("%w: the proposal is %d bytes; propose a smaller path", ErrTooBig, len(b))
	}
	size := int64(len(b))
	for _, c := range p.content {
		size += int64(len(c))
	}
	if used := folderBytes(proposalsDir(st)); used+size > maxPendingBytes {
		return fmt.Errorf("%w: the proposals waiting for review hold %d bytes; ask the person to review them in the MCP Sandbox window", ErrFull, used)
	}
	tmp := filepath.Join(proposalsDir(st), ".tmp-"+p.ID)
	if err := os.MkdirAll(filepath.Join(tmp, "new"), 0o700); err != nil {
		return fmt.Errorf("save proposal: %w", err)
	}
	defer os.RemoveAll(tmp)
	for i, f := range p.Files {
		if f.Change == Deleted {
			continue
		}
		if err := os.WriteFile(filepath.Join(tmp, "new", strconv.Itoa(i)), p.content[f.Rel], 0o600); err != nil {
			return fmt.Errorf("save proposal: %w", err)
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(tmp, "proposal.json"), b, 0o600); err != nil {
		return fmt.Errorf("save proposal: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("save proposal: %w", err)
	}
	return nil
}

// Load reads proposal id with its new content (checked against the
// hashes when it is applied).
func Load(st *state.Store, id string) (*Proposal, error) {
	dir, err := folder(st, id)
	if err != nil {
		return nil, err
	}
	p, err := readProposal(dir, id)
	if err != nil {
		return nil, err
	}
	p.content = map[string][]byte{}
	for i, f := range p.Files {
		if f.Change == Deleted {
			continue
		}
		b, err := readBlob(filepath.Join(dir, "new"), strconv.Itoa(i), maxApplyRead)
		if err != nil {
			return nil, fmt.Errorf("load proposal %s: %w", id, err)
		}
		p.content[f.Rel] = b
	}
	return p, nil
}

func readProposal(dir, id string) (*Proposal, error) {
	var p Proposal
	if err := state.ReadJSONFile(dir, "proposal.json", maxProposalJSON, &p); err != nil {
		return nil, fmt.Errorf("load proposal %s: %w", id, err)
	}
	if p.ID != id {
		return nil, fmt.Errorf("%w: proposal %s holds id %q", state.ErrAsk, id, p.ID)
	}
	return &p, nil
}

// readBlob reads the regular file name of dir: no symlink, at most max.
func readBlob(dir, name string, max int64) ([]byte, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if fi, err := r.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", state.ErrAsk, name)
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%w: %s is more than %d bytes", state.ErrAsk, name, max)
	}
	return b, err
}

// List returns the proposals waiting for a decision (no answer yet, not
// past their deadline), oldest first, without their new content.
func List(st *state.Store, now time.Time) []*Proposal {
	var out []*Proposal
	for _, p := range list(st) {
		if c, err := Decision(st, p, now); err == nil && c == "" {
			out = append(out, p)
		}
	}
	return out
}

func list(st *state.Store) []*Proposal {
	ents, err := os.ReadDir(proposalsDir(st))
	if err != nil {
		return nil
	}
	var out []*Proposal
	for _, e := range ents {
		if !e.IsDir() || !validID.MatchString(e.Name()) || len(out) >= 2*MaxPending {
			continue
		}
		if p, err := readProposal(filepath.Join(proposalsDir(st), e.Name()), e.Name()); err == nil {
			out = append(out, p)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].CreatedAt.Before(out[j-1].CreatedAt); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Decide records the person's choice (state.ChoiceAllow: apply;
// state.ChoiceDeny: reject) for proposal id.
func Decide(st *state.Store, id, choice string, now time.Time) error {
	dir, err := folder(st, id)
	if err != nil {
		return err
	}
	if choice != state.ChoiceAllow && choice != state.ChoiceDeny {
		return fmt.Errorf("%w: choice %q; a proposal is applied or rejected, never always", state.ErrAsk, choice)
	}
	p, err := readProposal(dir, id)
	if err != nil {
		return err
	}
	if !now.Before(p.Deadline) {
		return fmt.Errorf("proposal %s expired at %s: it was rejected; ask the assistant to propose again", id, p.Deadline.Format(time.RFC3339))
	}
	b, err := json.Marshal(state.Answer{ID: id, Choice: choice, AnsweredAt: now})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "answer.json"), b, 0o600)
}

// Decision is the person's choice for p: "" while it waits, state.ChoiceDeny
// past its deadline without one.
func Decision(st *state.Store, p *Proposal, now time.Time) (string, error) {
	dir, err := folder(st, p.ID)
	if err != nil {
		return "", err
	}
	var a state.Answer
	err = state.ReadJSONFile(dir, "answer.json", state.MaxAskFile, &a)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !now.Before(p.Deadline) {
			return state.ChoiceDeny, nil
		}
		return "", nil
	case err != nil:
		return "", err
	case a.ID != p.ID || a.Choice != state.ChoiceAllow && a.Choice != state.ChoiceDeny:
		return "", fmt.Errorf("%w: answer %q for %q", state.ErrAsk, a.Choice, a.ID)
	case a.AnsweredAt.After(p.Deadline):
		return state.ChoiceDeny, nil
	}
	return a.Choice, nil
}

// Await waits (polling every poll; 0: 250ms) for the decision on p.
func Await(ctx context.Context, st *state.Store, p *Proposal, poll time.Duration) (string, error) {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		c, err := Decision(st, p, time.Now())
		if err != nil || c != "" {
			return c, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// Drop removes proposal id and its answer.
func Drop(st *state.Store, id string) {
	if dir, err := folder(st, id); err == nil {
		os.RemoveAll(dir)
	}
}

// folderBytes is the size of the regular files below dir.
func folderBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Sweep removes proposals past their deadline by a minute (rejected; their
// server is no longer waiting), unreadable folders, and the temporary
// folders of a Save that died an hour ago.
func Sweep(st *state.Store, now time.Time) {
	ents, err := os.ReadDir(proposalsDir(st))
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > time.Hour {
				os.RemoveAll(filepath.Join(proposalsDir(st), e.Name()))
			}
			continue
		}
		if !validID.MatchString(e.Name()) {
			continue
		}
		p, err := readProposal(filepath.Join(proposalsDir(st), e.Name()), e.Name())
		if errors.Is(err, state.ErrAsk) || err == nil && now.After(p.Deadline.Add(time.Minute)) {
			Drop(st, e.Name())
		}
	}
}
