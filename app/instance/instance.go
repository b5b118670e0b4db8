package instance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// ErrRunning is returned by Acquire when another instance runs; it has
// been asked to show its window.
var ErrRunning = errors.New("the tray is already running")

// Instance is the lock and endpoint of the running tray.
type Instance struct {
	lock *flock.Flock
	ln   net.Listener
	ep   string

	closeOnce sync.Once
}

// request and reply are the whole protocol, one line each.
const (
	request = "show"
	reply   = "ok"
)

// Acquire makes this process the tray instance of dir (created if need be),
// or, when another process is it, asks that one to show its window and
// returns ErrRunning.
func Acquire(dir string) (*Instance, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("single instance: %w", err)
	}
	lock := flock.New(filepath.Join(dir, "tray.lock"))
	ep, err := endpoint(dir)
	if err != nil {
		return nil, fmt.Errorf("single instance: %w", err)
	}
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("single instance: %w", err)
	}
	if !ok {
		if err := askToShow(ep, 5*time.Second); err != nil {
			return nil, fmt.Errorf("single instance: another tray holds %s but does not answer: %w", lock.Path(), err)
		}
		return nil, ErrRunning
	}
	// The lock is ours, so whatever a crashed tray left at the endpoint
	// is stale: listen replaces it.
	ln, err := listen(ep)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("single instance: %w", err)
	}
	return &Instance{lock: lock, ln: ln, ep: ep}, nil
}

// askToShow connects to the running instance, retrying while it is still
// starting, and sends the request.
func askToShow(ep string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := sendShow(ep)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sendShow(ep string) error {
	c, err := dial(ep, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintln(c, request); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != reply {
		return fmt.Errorf("unexpected answer %q", line)
	}
	return nil
}

// Serve answers later launches until ctx is done or the instance is
// closed, calling show (from its own goroutine) for each.
func (i *Instance) Serve(ctx context.Context, show func()) {
	stop := context.AfterFunc(ctx, func() { i.ln.Close() })
	defer stop()
	for {
		c, err := i.ln.Accept()
		if err != nil {
			return
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && strings.TrimSpace(line) == request {
			show()
			fmt.Fprintln(c, reply)
		}
		c.Close()
	}
}

// Close stops listening and releases the lock.
func (i *Instance) Close() error {
	var err error
	i.closeOnce.Do(func() {
		i.ln.Close()
		removeEndpoint(i.ep)
		err = i.lock.Unlock()
	})
	return err
}
