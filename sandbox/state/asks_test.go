package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testQuestion(now time.Time) Question {
	return Question{ID: NewAskID(), SandboxID: "3f2a9c", Client: "Claude Desktop", Language: "python",
		Entries: []string{"pypi.org:443"}, AskedAt: now, Deadline: now.Add(time.Minute)}
}

// TestAskRoundTrip: a question is listed for the tray, its answer read
// back by the server, and both are gone once dropped.
func TestAskRoundTrip(t *testing.T) {
	st := openStore(t)
	now := time.Now()
	q := testQuestion(now)
	if err := st.PutQuestion(q); err != nil {
		t.Fatal(err)
	}
	qs := st.Questions(now)
	if len(qs) != 1 || qs[0].ID != q.ID || qs[0].Entries[0] != "pypi.org:443" {
		t.Fatalf("Questions = %+v", qs)
	}
	if a, err := st.ReadAnswer(q); a != nil || err != nil {
		t.Fatalf("before an answer: %v %v", a, err)
	}
	if err := st.PutAnswer(Answer{ID: q.ID, Choice: ChoiceAlways, AnsweredAt: now}); err != nil {
		t.Fatal(err)
	}
	a, err := st.ReadAnswer(q)
	if err != nil || a == nil || a.Choice != ChoiceAlways {
		t.Fatalf("ReadAnswer = %+v %v", a, err)
	}
	st.DropQuestion(q.ID)
	if qs := st.Questions(now); len(qs) != 0 {
		t.Fatalf("after drop: %+v", qs)
	}
	if err := st.PutAnswer(Answer{ID: q.ID, Choice: ChoiceAllow, AnsweredAt: now}); err == nil {
		t.Fatal("an answer to a dropped question was written")
	}
}

// TestAskHostileAnswers: whatever lies in the answer's place that is not
// a well-formed answer to this question is refused, never a yes.
func TestAskHostileAnswers(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name  string
		plant func(t *testing.T, path string, q Question)
	}{
		{"huge", func(t *testing.T, p string, q Question) {
			write(t, p, `{"id":"`+q.ID+`","choice":"allow","answered_at":"`+now.Format(time.RFC3339Nano)+`"}`+strings.Repeat(" ", MaxAskFile))
		}},
		{"malformed", func(t *testing.T, p string, q Question) { write(t, p, `{"id":"`+q.ID+`","choice":"allow"`) }},
		{"unknown field", func(t *testing.T, p string, q Question) {
			write(t, p, `{"id":"`+q.ID+`","choice":"allow","answered_at":"`+now.Format(time.RFC3339Nano)+`","also":1}`)
		}},
		{"two values", func(t *testing.T, p string, q Question) {
			write(t, p, `{"id":"`+q.ID+`","choice":"deny","answered_at":"`+now.Format(time.RFC3339Nano)+`"}{"id":"`+q.ID+`","choice":"allow"}`)
		}},
		{"wrong id", func(t *testing.T, p string, q Question) {
			write(t, p, `{"id":"`+NewAskID()+`","choice":"allow","answered_at":"`+now.Format(time.RFC3339Nano)+`"}`)
		}},
		{"unknown choice", func(t *testing.T, p string, q Question) {
			write(t, p, `{"id":"`+q.ID+`","choice":"yes","answered_at":"`+now.Format(time.RFC3339Nano)+`"}`)
		}},
		{"stale", func(t *testing.T, p string, q Question) {
			write(t, p, `{"id":"`+q.ID+`","choice":"allow","answered_at":"`+now.Add(-time.Hour).Format(time.RFC3339Nano)+`"}`)
		}},
		{"symlink", func(t *testing.T, p string, q Question) {
			good := filepath.Join(t.TempDir(), "good.json")
			write(t, good, `{"id":"`+q.ID+`","choice":"allow","answered_at":"`+now.Format(time.RFC3339Nano)+`"}`)
			if err := os.Symlink(good, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, p string, q Question) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			q := testQuestion(now)
			if err := st.PutQuestion(q); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, st.answerPath(q.ID), q)
			a, err := st.ReadAnswer(q)
			if a != nil || !errors.Is(err, ErrAsk) {
				t.Fatalf("ReadAnswer = %+v, %v; want an ErrAsk refusal", a, err)
			}
		})
	}
}

// TestAskHostileQuestions: the tray lists only well-formed questions,
// still open, each under its own id.
func TestAskHostileQuestions(t *testing.T) {
	now := time.Now()
	st := openStore(t)
	good := testQuestion(now)
	if err := st.PutQuestion(good); err != nil {
		t.Fatal(err)
	}
	late := testQuestion(now)
	late.Deadline = now.Add(-time.Second)
	if err := st.PutQuestion(late); err != nil {
		t.Fatal(err)
	}
	noEntries := testQuestion(now)
	noEntries.Entries = nil
	if err := st.PutQuestion(noEntries); err != nil {
		t.Fatal(err)
	}
	other := testQuestion(now)
	if err := st.PutQuestion(other); err != nil {
		t.Fatal(err)
	}
	// Under another question's name.
	if err := os.Rename(st.questionPath(other.ID), st.questionPath(NewAskID())); err != nil {
		t.Fatal(err)
	}
	write(t, st.questionPath(NewAskID()), strings.Repeat("{", MaxAskFile+10))
	write(t, filepath.Join(st.asksDir(), "../../x.ask.json"), "{}")
	if err := os.Symlink(st.questionPath(good.ID), st.questionPath(NewAskID())); err != nil {
		t.Fatal(err)
	}
	qs := st.Questions(now)
	if len(qs) != 1 || qs[0].ID != good.ID {
		t.Fatalf("Questions = %+v, want only %s", qs, good.ID)
	}
}

// TestAskListening: servers see the tray listening only while it holds
// the lock.
func TestAskListening(t *testing.T) {
	st := openStore(t)
	if st.AskListening() {
		t.Fatal("listening before any tray")
	}
	l, err := st.ListenAsks()
	if err != nil {
		t.Fatal(err)
	}
	// Another process's view: a store of its own on the same directory.
	other, err := Open(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if !other.AskListening() {
		t.Fatal("not listening while the tray holds the lock")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if other.AskListening() {
		t.Fatal("still listening after the tray let go")
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSweepAsks: answers without a question, questions long past their
// deadline and files that are no question go; a live question and its
// answer stay.
func TestSweepAsks(t *testing.T) {
	now := time.Now()
	st := openStore(t)
	live := testQuestion(now)
	dead := testQuestion(now.Add(-time.Hour))
	for _, q := range []Question{live, dead} {
		if err := st.PutQuestion(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutAnswer(Answer{ID: live.ID, Choice: ChoiceDeny, AnsweredAt: now}); err != nil {
		t.Fatal(err)
	}
	orphan := NewAskID()
	write(t, st.answerPath(orphan), "{}")
	junk := NewAskID()
	write(t, st.questionPath(junk), "not json")
	st.SweepAsks(now)
	for p, want := range map[string]bool{
		st.questionPath(live.ID): true, st.answerPath(live.ID): true,
		st.questionPath(dead.ID): false, st.answerPath(orphan): false, st.questionPath(junk): false,
	} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
