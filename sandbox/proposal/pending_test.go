package proposal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

func TestSaveLoadDecideApply(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	st, err := state.Open(w.state)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(ctx, project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	p.AppliedBy = ByWindow
	if err := Save(st, p); err != nil {
		t.Fatal(err)
	}
	now := p.CreatedAt.Add(time.Minute)
	got := List(st, now)
	if len(got) != 1 || got[0].ID != p.ID || got[0].Files[0].Diff != p.Files[0].Diff || got[0].AppliedBy != ByWindow {
		t.Fatalf("List: %+v", got)
	}
	if err := Decide(st, p.ID, state.ChoiceAlways, now); err == nil {
		t.Error("always accepted for a proposal")
	}
	if err := Decide(st, p.ID, state.ChoiceAllow, now); err != nil {
		t.Fatal(err)
	}
	if c, err := Await(ctx, st, p, time.Millisecond); c != state.ChoiceAllow || err != nil {
		t.Fatalf("Await: %q %v", c, err)
	}
	if len(List(st, now)) != 0 {
		t.Error("a decided proposal is still listed")
	}
	// The window applies what the server saved.
	loaded, err := Load(st, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Apply(ctx, loaded, ApplyOptions{Fence: w.opts.Fence, ApplyRoots: w.opts.ApplyRoots, BackupDir: BackupDir(st.Dir())})
	if err != nil || r.Status != StatusApplied {
		t.Fatalf("Apply of the loaded proposal: %+v %v", r, err)
	}
	if read(t, filepath.Join(w.home, "proj", "new", "c.py")) != "print(1)\n" {
		t.Error("c.py not written")
	}
	Drop(st, p.ID)
	if _, err := Load(st, p.ID); err == nil {
		t.Error("Load after Drop")
	}
}

func TestPendingExpiry(t *testing.T) {
	w := newWorld(t)
	st, _ := state.Open(w.state)
	w.req.TTL = time.Minute
	p, err := Build(context.Background(), project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(st, p); err != nil {
		t.Fatal(err)
	}
	late := p.Deadline.Add(time.Second)
	if c, err := Decision(st, p, late); c != state.ChoiceDeny || err != nil {
		t.Errorf("past the deadline: %q %v", c, err)
	}
	if err := Decide(st, p.ID, state.ChoiceAllow, late); err == nil || !strings.Contains(err.Error(), "propose again") {
		t.Errorf("a yes past the deadline: %v", err)
	}
	if len(List(st, late)) != 0 {
		t.Error("an expired proposal is listed")
	}
	Sweep(st, p.Deadline.Add(2*time.Minute))
	if _, err := os.Stat(filepath.Join(w.state, ProposalsDir, p.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Sweep left it: %v", err)
	}
}

func TestPendingBounds(t *testing.T) {
	w := newWorld(t)
	st, _ := state.Open(w.state)
	for i := range MaxPending + 1 {
		p, err := Build(context.Background(), project(t), w.req)
		if err != nil {
			t.Fatal(err)
		}
		err = Save(st, p)
		if i < MaxPending && err != nil {
			t.Fatalf("proposal %d: %v", i, err)
		}
		if i == MaxPending && !errors.Is(err, ErrFull) {
			t.Fatalf("proposal %d: %v, want ErrFull", i, err)
		}
	}
}

// TestPendingHostileFiles: what another process left in the folder is
// read as hostile: a symlinked or oversized proposal, a forged answer.
func TestPendingHostileFiles(t *testing.T) {
	w := newWorld(t)
	st, _ := state.Open(w.state)
	p, _ := Build(context.Background(), project(t), w.req)
	if err := Save(st, p); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.state, ProposalsDir, p.ID)
	os.WriteFile(filepath.Join(dir, "answer.json"), []byte(`{"id":"`+p.ID+`","choice":"always","answered_at":"2030-01-01T00:00:00Z"}`), 0o600)
	if _, err := Decision(st, p, p.CreatedAt); !errors.Is(err, state.ErrAsk) {
		t.Errorf("an answer of always: %v", err)
	}
	os.Remove(filepath.Join(dir, "new", "0"))
	os.Symlink(filepath.Join(w.home, ".bashrc"), filepath.Join(dir, "new", "0"))
	if _, err := Load(st, p.ID); !errors.Is(err, state.ErrAsk) {
		t.Errorf("a symlinked content file: %v", err)
	}
	js := filepath.Join(dir, "proposal.json")
	os.Remove(js)
	os.Symlink(filepath.Join(w.home, "proj", "a.py"), js)
	if _, err := Load(st, p.ID); !errors.Is(err, state.ErrAsk) {
		t.Errorf("a symlinked proposal.json: %v", err)
	}
	if _, err := Load(st, "../../etc"); !errors.Is(err, state.ErrAsk) {
		t.Errorf("a path as id: %v", err)
	}
}

func TestSweepTemporary(t *testing.T) {
	w := newWorld(t)
	st, _ := state.Open(w.state)
	tmp := filepath.Join(w.state, ProposalsDir, ".tmp-"+state.NewAskID())
	os.MkdirAll(tmp, 0o700)
	Sweep(st, time.Now())
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a fresh temporary folder swept: %v", err)
	}
	Sweep(st, time.Now().Add(2*time.Hour))
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an old temporary folder kept: %v", err)
	}
}
