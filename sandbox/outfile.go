package sandbox

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
// the sandbox user, through the engine's exec) and streams the output
// through to it. The file is the sandbox's: the server never reads it
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

// outputFile is one call's output file. Its methods may be called on nil
// (no file is kept: a one-shot sandbox, or limits.output_file_bytes 0).
type outputFile struct {
	start func() *outputWriterProc // starts the writer
	path  string
	limit int64 // bytes held before the writer starts
	max   int64 // bytes the file holds at most

	mu      sync.Mutex
	total   int64
	pending []byte
	w       *outputWriterProc // nil before the writer starts
	written int64
	failed  error
	closed  bool
}

// outputWriterProc is a running writer: the pipe to its stdin, done
// (closed when it ended, err then says how) and stop, which kills it.
type outputWriterProc struct {
	pw   *io.PipeWriter
	pr   *io.PipeReader
	done chan struct{}
	err  error
	stop context.CancelFunc
}

// kill ends the writer if it still runs, and waits a little for it to go
// (a writer the sandbox stopped is not left behind).
func (w *outputWriterProc) kill() {
	w.stop()
	t := time.NewTimer(outputFileWait)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
}

// outputFileFor returns the file keeping a call's output in sb, or nil
// when sb keeps none. limit is limits.output_bytes.
func (e *Engine) outputFileFor(ctx context.Context, sb *Sandbox, limit int) *outputFile {
	lim := e.cfg.Current().Limits
	if lim.OutputFileBytes <= 0 || sb.oneShot.Load() {
		return nil
	}
	f := &outputFile{limit: int64(limit), max: int64(lim.OutputFileBytes)}
	f.start = func() *outputWriterProc {
		// Numbered as files are made, so that the oldest is n-keep.
		n := sb.outputs.Add(1)
		f.path = outputDir + "/" + strconv.FormatInt(n, 10) + ".log"
		old := ""
		if n > keepOutputFiles {
			old = outputDir + "/" + strconv.FormatInt(n-keepOutputFiles, 10) + ".log"
		}
		// The writer lives as long as the call (finish ends its input),
		// not its timeout, and ends with the sandbox.
		wctx, stop := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(lim.MaxExecTimeoutSeconds)*time.Second+time.Minute)
		return e.startOutputWriter(wctx, stop, sb, f.path, old)
	}
	return f
}

// startOutputWriter runs the writer of path in sb (removing old first, if
// set) until its stdin ends or ctx does; stop ends ctx.
func (e *Engine) startOutputWriter(ctx context.Context, stop context.CancelFunc, sb *Sandbox, path, old string) *outputWriterProc {
	pr, pw := io.Pipe()
	w := &outputWriterProc{pw: pw, pr: pr, done: make(chan struct{}), stop: stop}
	go func() {
		defer stop()
		bctx, unbind := sb.bound(ctx)
		defer unbind()
		stderr := newCapture(512, nil)
		status, err := e.be.Exec(bctx, sb.ContainerID, ExecSpec{
			Cmd:     []string{"/bin/sh", "-c", outputWriter, "mcp-sandbox-output", path, old},
			WorkDir: "/tmp", User: sb.User, Stdin: pr, Stderr: stderr,
		})
		if err == nil && status.ExitCode != 0 {
			err = fmt.Errorf("exit code %d: %s", status.ExitCode, stderr.String())
		}
		// A writer that ended early fails the writes waiting on it.
		pr.CloseWithError(cmp.Or(err, io.EOF))
		w.err = err
		close(w.done)
	}()
	return w
}

// write takes a chunk of output, of either stream, as it arrives.
func (f *outputFile) write(p []byte) {
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

// finish ends the file once the call's process ended: it waits for the
// writer to have written it all. It returns the file's path, or "" when no
// file was needed (the output was not cut) or it could not be written.
func (f *outputFile) finish() string {
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

func (f *outputFile) pathIfKept() string {
	if f.w == nil || f.failed != nil {
		return ""
	}
	return f.path
}

// note says where the whole output is, for the line that says how much
// of it a result left out ("" when no file holds it).
func (f *outputFile) note() string {
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
