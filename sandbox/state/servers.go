package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gofrs/flock"
)

// A live server proves it is alive with a lock: it holds an exclusive
// flock on servers/<owner>.lock in the state directory from before it
// makes anything until it exits, and the kernel drops the lock whatever
// way the process ends (SIGKILL, a crash, the OOM killer). A reaper of the
// same state directory that can take the lock, or finds no file at all,
// has proof the owner is gone; one that cannot take it knows the owner is
// alive, in whatever PID namespace or container it runs, as long as it
// shares this directory (and its file system's locks: any local disk).
//
// A missing file is proof by construction: a server creates its file
// before it labels anything with its owner id, and the file is removed
// only by that server after it has stopped, or by a reaper while it holds
// the lock of an owner it proved gone. Owner ids are random per server
// process and never reused, so a gone owner never comes back.

// ServerLock is the lock a live server holds on its file in the state
// directory.
type ServerLock struct {
	fl *flock.Flock
}

// validOwner is the form of an owner id that names a lock file.
var validOwner = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ErrServerLock is returned when a server cannot take its lock (another
// process holds it, or the file cannot be made).
var ErrServerLock = errors.New("server lock")

func (s *Store) serverLockPath(owner string) (string, error) {
	if !validOwner.MatchString(owner) {
		return "", fmt.Errorf("%w: owner id %q cannot name a lock file", ErrServerLock, owner)
	}
	return filepath.Join(s.dir, "servers", owner+".lock"), nil
}

// LockServer takes the lock of the server owner, creating its file; the
// server holds it for its life and calls Release when it has stopped.
func (s *Store) LockServer(owner string) (*ServerLock, error) {
	p, err := s.serverLockPath(owner)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServerLock, err)
	}
	fl := flock.New(p)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrServerLock, p, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s is held by another process", ErrServerLock, p)
	}
	return &ServerLock{fl: fl}, nil
}

// Release removes the lock file and drops the lock: the server has
// stopped, so a reaper may take what it left. It is safe to call twice.
func (l *ServerLock) Release() error {
	if l == nil || !l.fl.Locked() {
		return nil
	}
	return removeLocked(l.fl)
}

// removeLocked removes a held lock's file and drops the lock. Where an
// open file cannot be removed (Windows), it is removed once unlocked and
// closed: whoever locks it in between finds its owner gone, which is true.
func removeLocked(fl *flock.Flock) error {
	// Its info file first, while the lock still says the server is
	// gone to anyone who tries it (serverinfo.go).
	ierr := os.Remove(strings.TrimSuffix(fl.Path(), ".lock") + ".json")
	if errors.Is(ierr, os.ErrNotExist) {
		ierr = nil
	}
	rerr := os.Remove(fl.Path())
	uerr := fl.Unlock()
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		rerr = os.Remove(fl.Path())
	}
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	return errors.Join(ierr, rerr, uerr)
}

// ServerGone reports whether the server owner of this state directory is
// proved gone: its lock file is absent, or this call could take its lock.
// A gone server's file is removed. Anything else (the lock is held, the
// owner id cannot name a file, the file cannot be opened) is not proof, and
// gives false.
func (s *Store) ServerGone(owner string) bool {
	p, err := s.serverLockPath(owner)
	if err != nil {
		return false
	}
	// Never created here: a reaper must not make the file it judges by.
	fl := flock.New(p, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil || !ok {
		return false
	}
	// Removed while locked: a reaper that opened it before sees it
	// unlocked next, which is true (its owner is gone).
	_ = removeLocked(fl)
	return true
}
