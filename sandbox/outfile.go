package sandbox

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
)

// What comes back from a sandbox is bounded in sandbox/output; the engine
// decides which sandboxes keep an output file, and runs its writer.

// capture is a stream of a call's output (output.Capture).
type capture = output.Capture

func newCapture(limit int, onWrite func([]byte)) *capture {
	return output.NewCapture(limit, onWrite)
}

// newCaptures returns a call's stdout and stderr: together they return at
// most limit bytes, and file (which may be nil) gets all of both.
func newCaptures(limit int, out OutputFunc, file *outputFile) (stdout, stderr *capture) {
	var f *output.File
	if file != nil {
		f = file.f
	}
	return output.NewPair(limit, streamTo(out, "stdout"), streamTo(out, "stderr"), f)
}

// outputFile is one call's output file, nil when none is kept.
type outputFile struct{ f *output.File }

// finish ends the file once the call's process ended and returns its
// path, or "" (output.File.Finish).
func (o *outputFile) finish() string {
	if o == nil {
		return ""
	}
	return o.f.Finish()
}

// outputFileFor returns the file keeping a call's output in sb, or nil
// when sb keeps none (a one-shot sandbox, or limits.output_file_bytes 0).
// limit is limits.output_bytes.
func (e *Engine) outputFileFor(ctx context.Context, sb *Sandbox, limit int) *outputFile {
	lim := e.cfg.Current().Limits
	if lim.OutputFileBytes <= 0 || sb.oneShot.Load() {
		return nil
	}
	return &outputFile{output.NewFile(int64(limit), int64(lim.OutputFileBytes), func() *output.Writer {
		// Numbered as files are made, so that the oldest is n-keep.
		path, old := output.Paths(sb.outputs.Add(1))
		// The writer lives as long as the call (finish ends its input),
		// not its timeout, and ends with the sandbox.
		wctx, stop := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(lim.MaxExecTimeoutSeconds)*time.Second+time.Minute)
		return output.StartWriter(path, stop, func(stdin io.Reader) error {
			return e.runOutputWriter(wctx, sb, path, old, stdin)
		})
	})}
}

// runOutputWriter execs the writer of path in sb as the sandbox user.
func (e *Engine) runOutputWriter(ctx context.Context, sb *Sandbox, path, old string, stdin io.Reader) error {
	bctx, unbind := sb.bound(ctx)
	defer unbind()
	stderr := newCapture(512, nil)
	status, err := e.be.Exec(bctx, sb.ContainerID, ExecSpec{
		Cmd: output.WriterCmd(path, old), WorkDir: "/tmp", User: sb.User, Stdin: stdin, Stderr: stderr,
	})
	if err == nil && status.ExitCode != 0 {
		err = fmt.Errorf("exit code %d: %s", status.ExitCode, stderr.String())
	}
	return err
}

// takeMem waits for the server's memory budget to buffer n bytes from a
// sandbox for ctx's request; the caller defers the returned func.
func (e *Engine) takeMem(ctx context.Context, n int64) (func(), error) {
	return e.mem.Take(ctx, n)
}

// byteBudget is the server-wide figure budget (output.FigureBudget) as
// the interpreters take and give it.
type byteBudget struct{ b *output.FigureBudget }

func newByteBudget(n int64) *byteBudget { return &byteBudget{output.NewFigureBudget(n)} }

func (b *byteBudget) take(n int) bool { return b.b.Take(n) }
func (b *byteBudget) give(n int)      { b.b.Give(n) }

// figureBudgetFor is the server-wide figure budget for cfg (nil: the
// default configuration).
func figureBudgetFor(cfg *config.Config) int64 {
	if cfg == nil {
		cfg = config.Default()
	}
	return output.FigureBudgetFor(cfg.Limits.ImageBytes)
}
