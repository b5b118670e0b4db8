package config

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Watcher keeps the newest valid configuration of one file. It reads the
// file every interval, which is cheap (the file is small), portable, and
// catches editors that replace the file by rename.
// When the file becomes invalid the last valid configuration stays in force
// and Err reports why.
type Watcher struct {
	path     string
	interval time.Duration
	log      *slog.Logger

	cur     atomic.Pointer[Config]
	mu      sync.Mutex
	err     error
	lastRaw []byte
	subs    []func(*Config)
}

// NewWatcher loads path once and returns a watcher over it. An invalid file
// is an error here: a server should not start on a configuration nobody meant.
func NewWatcher(path string, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	if interval <= 0 {
		interval = time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{path: path, interval: interval, log: log}
	if _, err := w.reload(true); err != nil {
		return nil, err
	}
	return w, nil
}

// NewWatcherOrDefaults is NewWatcher for a program that must run anyway
// (the tray): when the file is invalid it returns a watcher holding the
// defaults, which keeps reading the file and switches to it once it is
// fixed, together with the error.
func NewWatcherOrDefaults(path string, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	w, err := NewWatcher(path, interval, log)
	if err == nil {
		return w, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if interval <= 0 {
		interval = time.Second
	}
	w = &Watcher{path: path, interval: interval, log: log}
	c := Default()
	c.Source = path
	w.cur.Store(c)
	// Remember the bad bytes, so the first tick does not report them again.
	w.lastRaw, _ = os.ReadFile(path)
	w.err = err
	return w, err
}

// Static returns a watcher that always holds c; for tests and one-shot
// commands.
func Static(c *Config) *Watcher {
	w := &Watcher{path: c.Source}
	w.cur.Store(c)
	return w
}

// Current returns the newest valid configuration.
func (w *Watcher) Current() *Config { return w.cur.Load() }

// Err returns why the file on disk is not in force, or nil.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// OnChange registers f to be called (from the watcher's goroutine) with each
// new valid configuration.
func (w *Watcher) OnChange(f func(*Config)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs = append(w.subs, f)
}

// Run checks the file until ctx is done.
func (w *Watcher) Run(ctx context.Context) {
	if w.path == "" || w.interval == 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Check()
		}
	}
}

// Check reads the file now, as each tick of Run does. A program told of
// changes another way (a watch on the file's directory) calls it instead
// of running Run, and wakes up only when something changed.
func (w *Watcher) Check() {
	if w.path == "" {
		return
	}
	changed, err := w.reload(false)
	if err != nil {
		w.log.Warn("config file invalid; keeping the previous settings until it is fixed (a fixed file applies within a second, no restart)", "path", w.path, "err", err)
	} else if changed {
		w.log.Info("config reloaded; new calls use it (no restart needed)", "path", w.path)
	}
}

// reload reads the file and installs it when it changed and is valid. The
// file is small, so it is simply read each time: a stat can miss a rewrite
// of the same size within the file system's timestamp granularity.
func (w *Watcher) reload(first bool) (changed bool, err error) {
	raw, err := os.ReadFile(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		raw, err = nil, nil
	} else if err != nil {
		return false, err
	}
	w.mu.Lock()
	same := !first && bytes.Equal(raw, w.lastRaw) && (raw == nil) == (w.lastRaw == nil)
	w.mu.Unlock()
	if same {
		return false, nil
	}

	var c *Config
	if raw == nil {
		c = Default()
		c.Source = w.path
	} else if c, err = Parse(w.path, raw); err != nil {
		w.mu.Lock()
		w.err = err
		w.lastRaw = raw
		w.mu.Unlock()
		return false, err
	}
	w.mu.Lock()
	w.err = nil
	w.lastRaw = raw
	subs := append([]func(*Config){}, w.subs...)
	w.mu.Unlock()
	w.cur.Store(c)
	for _, f := range subs {
		f(c)
	}
	return true, nil
}
