package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ErrNotJSONRPC means the server wrote a line to stdout that is not a
// JSON-RPC message.
var ErrNotJSONRPC = errors.New("not a JSON-RPC message")

// ErrExited means the server's stdout closed (it exited) before it
// answered.
var ErrExited = errors.New("the server closed its stdout")

// DefaultTerminateAfter is how long Close waits for the server to exit on
// its own after its stdin closes, and again after asking it to terminate.
const DefaultTerminateAfter = 5 * time.Second

// Options says how a Session introduces itself and ends.
type Options struct {
	// Name and Version are the client's account of itself.
	Name, Version string
	// ProtocolVersion pins the protocol revision to ask for. Empty asks
	// for the newest the library speaks (2026-07-28 through
	// server/discover) and falls back to the initialize handshake.
	ProtocolVersion string
	// TerminateAfter is how long Close waits after closing stdin before
	// it signals the process to terminate, and after that before it kills
	// it; zero means DefaultTerminateAfter.
	TerminateAfter time.Duration
	// Tap, when set, sees each line the server writes, as sent, before
	// the library decodes it (the benchmark measures tools/list on the
	// wire with it); it must not keep line.
	Tap func(line []byte)
}

// Session is a started server and the MCP connection to it.
type Session struct {
	c    *client.Client
	cmd  *exec.Cmd
	init *mcp.InitializeResult
	opts Options

	stdin   *os.File
	exited  chan struct{} // closed when cmd.Wait returns
	waitErr error

	brokenOnce sync.Once
	broken     chan struct{} // closed on the first line that is not JSON
	brokenErr  error
	eof        chan struct{} // closed when stdout ends

	closeOnce sync.Once
	closeErr  error
}

// Start runs cmd, which must not have been started and whose Stdin and
// Stdout must be nil (its Stderr is the caller's), and completes the MCP
// handshake. On failure the process has been stopped and waited for, so
// cmd.ProcessState tells how it ended; cmd.Process is nil when it could
// not be started at all.
func Start(ctx context.Context, cmd *exec.Cmd, o Options) (*Session, error) {
	if o.TerminateAfter <= 0 {
		o.TerminateAfter = DefaultTerminateAfter
	}
	if o.Version == "" {
		o.Version = "1"
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	// The child holds its own copies of these ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	s := &Session{cmd: cmd, opts: o, stdin: inW, exited: make(chan struct{}), broken: make(chan struct{}), eof: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	lines, fwd := io.Pipe()
	go s.filter(outR, fwd)

	var copts []client.ClientOption
	if o.ProtocolVersion != "" {
		copts = append(copts, client.WithProtocolVersion(o.ProtocolVersion))
	}
	s.c = client.NewClient(transport.NewIO(lines, inW, nil), copts...)
	err = s.do(ctx, func(ctx context.Context) error {
		if err := s.c.Start(ctx); err != nil {
			return err
		}
		req := mcp.InitializeRequest{}
		req.Params.ProtocolVersion = o.ProtocolVersion
		req.Params.ClientInfo = mcp.Implementation{Name: o.Name, Version: o.Version}
		ir, err := s.c.Initialize(ctx, req)
		s.init = ir
		return err
	})
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return s, nil
}

// filter copies the server's stdout to the library line by line. A line
// that is not JSON breaks the session: calls under way end at once. At the
// end of stdout the library sees the end of its input and fails what is
// still waiting for an answer.
func (s *Session) filter(r *os.File, w *io.PipeWriter) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !json.Valid(t) {
				s.breakWith(fmt.Errorf("%w: %q", ErrNotJSONRPC, clip(t, 120)))
				w.Close()
				// Keep reading so that the server never blocks on a
				// full pipe before Close stops it.
				_, _ = io.Copy(io.Discard, br)
				return
			}
			if s.opts.Tap != nil {
				s.opts.Tap(t)
			}
			if _, werr := w.Write(append(t, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			close(s.eof)
			w.Close()
			return
		}
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func (s *Session) breakWith(err error) {
	s.brokenOnce.Do(func() {
		s.brokenErr = err
		close(s.broken)
	})
}

// do runs f with a context that ends when the session breaks, and returns
// the reason the session broke in place of the library's account of it.
func (s *Session) do(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.broken:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := f(ctx)
	if err == nil {
		return nil
	}
	select {
	case <-s.broken:
		return s.brokenErr
	default:
	}
	select {
	case <-s.eof:
		return fmt.Errorf("%w: %v", ErrExited, err)
	default:
		return err
	}
}

// InitializeResult is what the server answered to the handshake (or to
// server/discover, rendered in the same shape).
func (s *Session) InitializeResult() *mcp.InitializeResult { return s.init }

// ProtocolVersion is the revision the two sides agreed on.
func (s *Session) ProtocolVersion() string { return s.c.ProtocolVersion() }

// Client is the library's client, for what this package does not wrap.
func (s *Session) Client() *client.Client { return s.c }

// ListTools lists the server's tools, following up to pages pages.
func (s *Session) ListTools(ctx context.Context, pages int) ([]mcp.Tool, error) {
	var tools []mcp.Tool
	err := s.do(ctx, func(ctx context.Context) error {
		req := mcp.ListToolsRequest{}
		for range pages {
			lt, err := s.c.ListToolsByPage(ctx, req)
			if err != nil {
				return err
			}
			tools = append(tools, lt.Tools...)
			if lt.NextCursor == "" {
				return nil
			}
			req.Params.Cursor = lt.NextCursor
		}
		return nil
	})
	return tools, err
}

// Result is a tool's result: its text content joined by newlines, its
// structured content and whether it is an error result.
type Result struct {
	Text       string
	Structured any
	IsError    bool
}

// Decode decodes the structured content into out, and the output that
// sandbox_exec and run_code send in the text only (OutputOf) into its
// stdout, stderr and result fields.
func (r *Result) Decode(out any) error {
	b, err := json.Marshal(r.Structured)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return err
	}
	if o := OutputOf(r.Text); len(o) > 0 {
		b, _ = json.Marshal(o)
		return json.Unmarshal(b, out)
	}
	return nil
}

// OutputOf reads the output sections of a sandbox_exec or run_code text
// ("--- stdout", "--- stderr", "--- result"), keyed as the fields are.
func OutputOf(text string) map[string]string {
	out := map[string]string{}
	key := ""
	for l := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(l, "--- "); ok {
			key = strings.TrimSpace(rest)
			if key != "stdout" && key != "stderr" && key != "result" {
				key = ""
			}
			continue
		}
		if key != "" {
			out[key] += l
		}
	}
	if r, ok := out["result"]; ok {
		out["result"] = strings.TrimSuffix(r, "\n")
	}
	return out
}

// CallTool calls a tool.
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (*Result, error) {
	var res *mcp.CallToolResult
	err := s.do(ctx, func(ctx context.Context) error {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		var err error
		res, err = s.c.CallTool(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &Result{Structured: res.StructuredContent, IsError: res.IsError}
	var text []byte
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			if len(text) > 0 {
				text = append(text, '\n')
			}
			text = append(text, tc.Text...)
		}
	}
	out.Text = string(text)
	return out, nil
}

// Close ends the session: it closes the server's stdin (a stdio server's
// signal to finish), waits TerminateAfter, asks the process to terminate,
// waits again and then kills it. The process has exited when Close
// returns; the error says how, if it was not a clean exit on its own.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.c != nil {
			_ = s.c.Close() // closes stdin
		} else {
			_ = s.stdin.Close()
		}
		s.closeErr = s.stop()
	})
	return s.closeErr
}

func (s *Session) stop() error {
	t := time.NewTimer(s.opts.TerminateAfter)
	defer t.Stop()
	select {
	case <-s.exited:
		return s.waitErr
	case <-t.C:
	}
	if runtime.GOOS == "windows" {
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("killed after %v", s.opts.TerminateAfter)
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	t.Reset(s.opts.TerminateAfter)
	select {
	case <-s.exited:
		return fmt.Errorf("terminated after %v: %v", s.opts.TerminateAfter, s.waitErr)
	case <-t.C:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	return fmt.Errorf("killed after %v", 2*s.opts.TerminateAfter)
}
