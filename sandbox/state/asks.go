package state

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// A server whose client cannot be asked (no elicitation capability, a
// stateless HTTP session, the creating session gone) asks the person
// through the tray, by files in the state directory's asks folder:
//
//	asks/listener.lock   held (flock) by the tray while it shows questions
//	asks/<id>.ask.json   a Question, written atomically by the server
//	asks/<id>.answer.json an Answer, written atomically by the tray
//
// The server asks only while the listener lock is held, waits for the
// answer until the question's deadline, and removes both files after.
// The tray withdraws a question whose file is gone. Both sides read the
// other's file as hostile-shaped: at most MaxAskFile bytes, a regular
// file (no symlink), one strict JSON value, the id it was asked under.

// AsksDir is the asks folder's name in the state directory.
const AsksDir = "asks"

// MaxAskFile bounds a question or answer file.
const MaxAskFile = 16 << 10

// The choices an Answer carries.
const (
	ChoiceAllow  = "allow"
	ChoiceAlways = "always"
	ChoiceDeny   = "deny"
)

// ErrAsk is the class of a question or answer file that cannot be used.
var ErrAsk = errors.New("ask file")

// Question is what a server asks the person.
type Question struct {
	ID string `json:"id"`
	// SandboxID is empty for a sandbox_create's list.
	SandboxID string `json:"sandbox_id,omitempty"`
	Client    string `json:"client"`
	Language  string `json:"language"`
	// Entries are the allow_domains entries a yes grants (host:port).
	Entries  []string  `json:"entries"`
	AskedAt  time.Time `json:"asked_at"`
	Deadline time.Time `json:"deadline"`
}

// Answer is the person's choice for the question ID.
type Answer struct {
	ID         string    `json:"id"`
	Choice     string    `json:"choice"`
	AnsweredAt time.Time `json:"answered_at"`
}

var validAskID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// NewAskID returns a random question id.
func NewAskID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Store) asksDir() string { return filepath.Join(s.dir, AsksDir) }

// AskListener is the tray's hold on the asks folder: while it is held,
// servers put questions to it.
type AskListener struct{ fl *flock.Flock }

// ListenAsks takes the listener lock (waiting while a server's probe
// holds it for a moment) and returns it; Close lets it go.
func (s *Store) ListenAsks() (*AskListener, error) {
	if err := os.MkdirAll(s.asksDir(), 0o700); err != nil {
		return nil, fmt.Errorf("listen for questions: %w", err)
	}
	fl := flock.New(filepath.Join(s.asksDir(), "listener.lock"), flock.SetPermissions(0o600))
	for i := 0; ; i++ {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("listen for questions: %w", err)
		}
		if ok {
			return &AskListener{fl: fl}, nil
		}
		if i == 50 {
			return nil, fmt.Errorf("listen for questions: %s is held by another process", fl.Path())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close lets the lock go: servers stop asking the tray.
func (l *AskListener) Close() error {
	if l == nil {
		return nil
	}
	return l.fl.Unlock()
}

// AskListening reports whether a tray holds the listener lock now.
func (s *Store) AskListening() bool {
	// Never created here: no file means no tray ever listened.
	fl := flock.New(filepath.Join(s.asksDir(), "listener.lock"), flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryRLock()
	if err != nil {
		return false
	}
	if ok {
		fl.Unlock()
		return false
	}
	return true
}

// PutQuestion writes q (its ID must be a NewAskID) for the tray, after
// removing any answer already under that id.
func (s *Store) PutQuestion(q Question) error {
	if !validAskID.MatchString(q.ID) {
		return fmt.Errorf("%w: id %q", ErrAsk, q.ID)
	}
	b, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAsk, err)
	}
	if len(b) > MaxAskFile {
		return fmt.Errorf("%w: the question is %d bytes, more than %d", ErrAsk, len(b), MaxAskFile)
	}
	if err := os.MkdirAll(s.asksDir(), 0o700); err != nil {
		return fmt.Errorf("put question: %w", err)
	}
	os.Remove(s.answerPath(q.ID))
	return atomicfile.WriteFile(s.questionPath(q.ID), b, 0o600)
}

// DropQuestion removes question id and its answer.
func (s *Store) DropQuestion(id string) {
	if !validAskID.MatchString(id) {
		return
	}
	os.Remove(s.questionPath(id))
	os.Remove(s.answerPath(id))
}

// PutAnswer writes the person's choice for question id.
func (s *Store) PutAnswer(a Answer) error {
	if !validAskID.MatchString(a.ID) || !validChoice(a.Choice) {
		return fmt.Errorf("%w: answer %q for %q", ErrAsk, a.Choice, a.ID)
	}
	if _, err := os.Lstat(s.questionPath(a.ID)); err != nil {
		return fmt.Errorf("put answer: the question is gone: %w", err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAsk, err)
	}
	return atomicfile.WriteFile(s.answerPath(a.ID), b, 0o600)
}

func validChoice(c string) bool {
	return c == ChoiceAllow || c == ChoiceAlways || c == ChoiceDeny
}

// ReadAnswer reads the answer to q, if one is there: (nil, nil) when
// not yet; an ErrAsk error when the file is not a usable answer to q.
func (s *Store) ReadAnswer(q Question) (*Answer, error) {
	var a Answer
	err := readAskFile(s.asksDir(), q.ID+".answer.json", &a)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case a.ID != q.ID:
		return nil, fmt.Errorf("%w: the answer is for %q", ErrAsk, a.ID)
	case !validChoice(a.Choice):
		return nil, fmt.Errorf("%w: choice %q", ErrAsk, a.Choice)
	case a.AnsweredAt.Before(q.AskedAt.Add(-time.Second)):
		return nil, fmt.Errorf("%w: answered at %v, before the question was asked", ErrAsk, a.AnsweredAt)
	}
	return &a, nil
}

// Questions returns the pending questions that read as such, oldest
// first; files that do not (too big, malformed, a symlink, past their
// deadline by now) are left out.
func (s *Store) Questions(now time.Time) []Question {
	ents, err := os.ReadDir(s.asksDir())
	if err != nil {
		return nil
	}
	var qs []Question
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".ask.json")
		if !ok || !validAskID.MatchString(id) || len(qs) >= maxQuestions {
			continue
		}
		var q Question
		if readAskFile(s.asksDir(), e.Name(), &q) != nil || q.ID != id || !now.Before(q.Deadline) || len(q.Entries) == 0 {
			continue
		}
		qs = append(qs, q)
	}
	sortQuestions(qs)
	return qs
}

// maxQuestions bounds the questions the tray shows at once.
const maxQuestions = 32

func sortQuestions(qs []Question) {
	for i := 1; i < len(qs); i++ {
		for j := i; j > 0 && qs[j].AskedAt.Before(qs[j-1].AskedAt); j-- {
			qs[j], qs[j-1] = qs[j-1], qs[j]
		}
	}
}

// SweepAsks removes what no one will read: an answer whose question is
// gone (its server stopped waiting as the person answered) and a
// question past its deadline by a minute (its server died waiting).
func (s *Store) SweepAsks(now time.Time) {
	ents, err := os.ReadDir(s.asksDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".answer.json"); ok && validAskID.MatchString(id) {
			if _, err := os.Lstat(s.questionPath(id)); errors.Is(err, fs.ErrNotExist) {
				os.Remove(s.answerPath(id))
			}
			continue
		}
		id, ok := strings.CutSuffix(e.Name(), ".ask.json")
		if !ok || !validAskID.MatchString(id) {
			continue
		}
		var q Question
		err := readAskFile(s.asksDir(), e.Name(), &q)
		if errors.Is(err, ErrAsk) || err == nil && now.After(q.Deadline.Add(time.Minute)) {
			s.DropQuestion(id)
		}
	}
}

func (s *Store) questionPath(id string) string { return filepath.Join(s.asksDir(), id+".ask.json") }
func (s *Store) answerPath(id string) string   { return filepath.Join(s.asksDir(), id+".answer.json") }

// readAskFile decodes the regular file name in dir into v: no symlink,
// at most MaxAskFile bytes, one JSON value with no unknown field.
func readAskFile(dir, name string, v any) error { return ReadJSONFile(dir, name, MaxAskFile, v) }

// ReadJSONFile decodes the regular file name in dir into v as the tray
// and the servers read each other's files: no symlink, at most max bytes,
// one JSON value with no unknown field. An unusable file is an ErrAsk
// error.
func ReadJSONFile(dir, name string, max int64, v any) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrAsk, name)
	}
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrAsk, name)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAsk, err)
	}
	if int64(len(b)) > max {
		return fmt.Errorf("%w: %s is more than %d bytes", ErrAsk, name, max)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrAsk, name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: %s has data after its value", ErrAsk, name)
	}
	return nil
}
