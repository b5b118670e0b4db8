package output

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// A call's output is returned cut to limits.output_bytes; the whole of it
// (stdout and stderr as they arrived, up to limits.output_file_bytes) is
// kept in a file in the sandbox, which the result names as output_file.
// The server holds none of it beyond the first limits.output_bytes: once
// the output outgrows them, it starts a writer process in the sandbox (as
// the sandbox user, through the engine's exec, which StartWriter is
// given) and streams the output through to it. The file is the sandbox's: the server never reads it
// back, so what the sandbox's code does to it concerns the sandbox only.

// outputDir holds the output files in the sandbox.
const outputDir = "/tmp/.mcp-output"

// keepOutputFiles is how many calls' output files a sandbox keeps (they
// count against /tmp, a tmpfs): a new one removes the oldest.
const keepOutputFiles = 3

// outputFileWait bounds how long a result waits for the writer to have
// written the file once the command ended.
const outputFileWait = 10 * time.Second

// outputWriter is the writer process: it makes the directory, removes the
// oldest file ($2, if any) and writes its stdin to $1.
const outputWriter = `mkdir -p "${1%/*}" && { [ -z "$2" ] || rm -f -- "$2"; } && exec cat >"$1"`

// errWriterStalled: the writer did not read for outputFileWait.
var errWriterStalled = errors.New("the writer stopped reading")

// File is one call's output file. Its methods may be called on nil
// (no file is kept: a one-shot sandbox, or limits.output_file_bytes 0).
type File struct {
	start func() *Writer // starts the writer
	path  string
	limit int64 // bytes held before the writer starts
	max   int64 // bytes the file holds at most

	mu      sync.Mutex
	total   int64
	pending []byte
	w       *Writer // nil before the writer starts
	written int64
	failed  error
	closed  bool
}

// Writer is a running writer: the path it writes, the pipe to its stdin,
// done (closed when it ended, err then says how) and stop, which kills it.
type Writer struct {
	path string
	pw   *io.PipeWriter
	pr   *io.PipeReader
	done chan struct{}
	err  error
	stop context.CancelFunc
}

// kill ends the writer if it still runs, and waits a little for it to go
// (a writer the sandbox stopped is not left behind).
func (w *Writer) kill() {
	w.stop()
	t := time.NewTimer(outputFileWait)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
}

// NewFile returns the file that keeps a call's whole output: it holds up
// to limit bytes (limits.output_bytes) itself, then calls start, which
// starts the writer (StartWriter) of the call's file; the file gets at
// most max bytes (limits.output_file_bytes).
func NewFile(limit, max int64, start func() *Writer) *File {
	return &File{start: start, limit: limit, max: max}
}

// Paths returns the path of a sandbox's nth output file and the oldest
// one, which the writer removes ("" while fewer than keepOutputFiles are
// made).
func Paths(n int64) (path, old string) {
	path = outputDir + "/" + strconv.FormatInt(n, 10) + ".log"
	if n > keepOutputFiles {
		old = outputDir + "/" + strconv.FormatInt(n-keepOutputFiles, 10) + ".log"
	}
	return path, old
}

// WriterCmd is the command of the writer of path, which removes old
// first (if set). It runs as the sandbox user.
func WriterCmd(path, old string) []string {
	return []string{"/bin/sh", "-c", outputWriter, "mcp-sandbox-output", path, old}
}

// StartWriter runs the writer of path: run execs it in the sandbox with
// stdin as its input, until stdin ends or its context does; stop ends
// that context.
func StartWriter(path string, stop context.CancelFunc, run func(stdin io.Reader) error) *Writer {
	pr, pw := io.Pipe()
	w := &Writer{path: path, pw: pw, pr: pr, done: make(chan struct{}), stop: stop}
	go func() {
		defer stop()
		err := run(pr)
		// A writer that ended early fails the writes waiting on it.
		pr.CloseWithError(cmp.Or(err, io.EOF))
		w.err = err
		close(w.done)
	}()
	return w
}

// write takes a chunk of output, of either stream, as it arrives.
func (f *File) write(p []byte) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.failed != nil {
		return
	}
	f.total += int64(len(p))
	if f.w == nil {
		f.pending = append(f.pending, p...)
		if f.total <= f.limit {
			return
		}
		f.w = f.start()
		f.path = f.w.path
		p, f.pending = f.pending, nil
	}
	p = p[:min(int64(len(p)), f.max-f.written)]
	if len(p) == 0 {
		return
	}
	// Blocking here slows the command's output to the writer's pace; a
	// writer stopped from inside the sandbox is given up on.
	t := time.AfterFunc(outputFileWait, func() { f.w.pr.CloseWithError(errWriterStalled) })
	n, err := f.w.pw.Write(p)
	t.Stop()
	f.written += int64(n)
	if err != nil {
		f.failed = err
	}
}

// Finish ends the file once the call's process ended: it waits for the
// writer to have written it all. It returns the file's path, or "" when no
// file was needed (the output was not cut) or it could not be written.
func (f *File) Finish() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.pathIfKept()
	}
	f.closed = true
	f.pending = nil
	if f.w == nil {
		return ""
	}
	defer f.w.kill()
	if f.failed != nil {
		return ""
	}
	_ = f.w.pw.Close()
	t := time.NewTimer(outputFileWait)
	defer t.Stop()
	select {
	case <-f.w.done:
		f.failed = f.w.err
	case <-t.C:
		f.failed = errors.New("the writer did not finish in time")
	}
	return f.pathIfKept()
}

func (f *File) pathIfKept() string {
	if f.w == nil || f.failed != nil {
		return ""
	}
	return f.path
}

// note says where the whole output is, for the line that says how much
// of it a result left out ("" when no file holds it).
func (f *File) note() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !f.closed || f.pathIfKept() == "":
		return ""
	case f.total > f.written:
		return fmt.Sprintf("; its first %d bytes are in %s (limits.output_file_bytes)", f.written, f.path)
	}
	return "; all of it is in " + f.path
}
