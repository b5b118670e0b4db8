package applog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/gofrs/flock"
)

// Options bounds the log's size.
type Options struct {
	// MaxBytes is the size at which the file is rotated; 0 means 5 MB.
	MaxBytes int64
	// Keep is how many rotated files are kept (NAME.log.1 is the newest);
	// 0 means 3.
	Keep int
}

// Writer is a log file that rotates itself. It is safe for concurrent use,
// by goroutines and by processes that open the same file.
type Writer struct {
	path string
	opt  Options
	lock *flock.Flock // shared with every process writing path

	mu sync.Mutex
	f  *os.File
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
	p := filepath.Join(dir, name+".log")
	w := &Writer{path: p, opt: opt, lock: flock.New(p+".lock", flock.SetPermissions(0o600))}
	unlock := w.lockFile()
	defer unlock()
	if err := w.open(); err != nil {
		return nil, err
	}
	if size, _ := w.size(); size >= opt.MaxBytes {
		if err := w.rotate(); err != nil {
			w.f.Close()
			return nil, err
		}
	}
	return w, nil
}

// Path returns the current log file's path.
func (w *Writer) Path() string { return w.path }

// lockFile takes the lock shared with other processes and returns its
// release. A lock that cannot be taken (a read-only directory, a file
// system without locks) does not stop logging: it only loses the
// protection against another process's rotation.
func (w *Writer) lockFile() (unlock func()) {
	if err := w.lock.Lock(); err != nil {
		return func() {}
	}
	return func() { _ = w.lock.Unlock() }
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	w.f = f
	return nil
}

// size is the size of the file w holds, with what every process wrote.
func (w *Writer) size() (int64, error) {
	st, err := w.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// current makes sure w writes to the file at w.path: another process may
// have rotated the one w holds away.
func (w *Writer) current() error {
	held, err := w.f.Stat()
	if err != nil {
		return err
	}
	if now, err := os.Stat(w.path); err == nil && os.SameFile(held, now) {
		return nil
	}
	w.f.Close()
	return w.open()
}

// Write appends p, rotating first when p would take the file over the
// limit. It holds the lock shared with other processes while it does.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, os.ErrClosed
	}
	unlock := w.lockFile()
	defer unlock()
	if err := w.current(); err != nil {
		return 0, err
	}
	if size, err := w.size(); err == nil && size > 0 && size+int64(len(p)) > w.opt.MaxBytes {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	return w.f.Write(p)
}

// rotate shifts NAME.log.(i) to NAME.log.(i+1), dropping the oldest, moves
// the current file to NAME.log.1 and starts a new one. The caller holds
// the lock. A file that cannot be moved (on Windows, while another process
// has it open) is kept and written on.
func (w *Writer) rotate() error {
	w.f.Close()
	os.Remove(w.path + "." + strconv.Itoa(w.opt.Keep))
	for i := w.opt.Keep - 1; i >= 1; i-- {
		os.Rename(w.path+"."+strconv.Itoa(i), w.path+"."+strconv.Itoa(i+1))
	}
	_ = os.Rename(w.path, w.path+".1")
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
