// Package applog writes the tray's log to a file that rotates by size, so a
// tray left running for months keeps a bounded log.
//
//	w, err := applog.Open(filepath.Join(config.StateDir(), "logs"), "tray", applog.Options{})
//	log := slog.New(slog.NewTextHandler(w, nil))
//	defer w.Close()
package applog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Options bounds the log's size.
type Options struct {
	// MaxBytes is the size at which the file is rotated; 0 means 5 MB.
	MaxBytes int64
	// Keep is how many rotated files are kept (NAME.log.1 is the newest);
	// 0 means 3.
	Keep int
}

// Writer is a log file that rotates itself. It is safe for concurrent use.
type Writer struct {
	path string
	opt  Options

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (creating, mode 0600) dir/NAME.log for appending, rotating it
// first if it is already over the limit.
func Open(dir, name string, opt Options) (*Writer, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 5 << 20
	}
	if opt.Keep <= 0 {
		opt.Keep = 3
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	w := &Writer{path: filepath.Join(dir, name+".log"), opt: opt}
	if err := w.open(); err != nil {
		return nil, err
	}
	if w.size >= opt.MaxBytes {
		if err := w.rotate(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Path returns the current log file's path.
func (w *Writer) Path() string { return w.path }

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	w.f, w.size = f, st.Size()
	return nil
}

// Write appends p, rotating first when p would take the file over the limit.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, os.ErrClosed
	}
	if w.size > 0 && w.size+int64(len(p)) > w.opt.MaxBytes {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

// rotate shifts NAME.log.(i) to NAME.log.(i+1), dropping the oldest, moves
// the current file to NAME.log.1 and starts a new one.
func (w *Writer) rotate() error {
	w.f.Close()
	os.Remove(w.path + "." + strconv.Itoa(w.opt.Keep))
	for i := w.opt.Keep - 1; i >= 1; i-- {
		os.Rename(w.path+"."+strconv.Itoa(i), w.path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(w.path, w.path+".1"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("rotate log: %w", err)
	}
	return w.open()
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
