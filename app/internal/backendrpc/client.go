package backendrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/childproc"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Client calls a backend served by a child process (Start) or by Serve
// on any pair of streams (NewClient). It is a backend.Backend for what
// the tray and the window do; the calls that make or run sandboxes fail
// saying to use an AI client or the CLI.
type Client struct {
	w    io.WriteCloser
	wmu  sync.Mutex
	wait func() error // the child's; nil without one
	proc *os.Process  // the child; nil without one

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan response
	done    chan struct{} // closed when the child's answers end
	err     error         // why they ended
}

// Start starts path (the server binary) as a child serving its backend
// on its stdin and stdout; its stderr is logged. The child ends when
// Close closes its stdin, or when this process ends.
func Start(path string, log *slog.Logger) (*Client, error) {
	cmd := exec.Command(path, Command)
	childproc.NoWindow(cmd)
	cmd.Stderr = &lineLog{log: log}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w: reinstall MCP Sandbox so that mcp-sandbox is beside the tray", path, Command, err)
	}
	log.Info("reading the cluster through the server", "path", path, "pid", cmd.Process.Pid)
	c := newClient(out, in)
	c.wait, c.proc = cmd.Wait, cmd.Process
	return c, nil
}

// NewClient returns a client that writes calls to w and reads answers
// from r (Serve's other ends).
func NewClient(r io.Reader, w io.WriteCloser) *Client { return newClient(r, w) }

func newClient(r io.Reader, w io.WriteCloser) *Client {
	c := &Client{w: w, pending: map[uint64]chan response{}, done: make(chan struct{})}
	go c.read(r)
	return c
}

// read delivers the answers until r ends, then fails the calls left.
func (c *Client) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 2*maxBytes+4<<10)
	for sc.Scan() {
		var res response
		if json.Unmarshal(sc.Bytes(), &res) != nil {
			continue
		}
		c.mu.Lock()
		ch := c.pending[res.ID]
		delete(c.pending, res.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- res
		}
	}
	err := sc.Err()
	if c.wait != nil {
		if werr := c.wait(); werr != nil && err == nil {
			err = werr
		}
	}
	c.mu.Lock()
	c.err = fmt.Errorf("mcp-sandbox %s ended (%v): looking at the cluster again starts it anew; the tray's log has what it said", Command, err)
	c.mu.Unlock()
	close(c.done)
}

// Alive reports whether the child still answers.
func (c *Client) Alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Done is closed when the child's answers end (it exited); Err then
// says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the child's answers ended, nil while it answers.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the child: its stdin closes, so it returns; after 5 seconds
// without it ending, Close returns anyway (the child ends with its
// calls, each bounded by the parent's contexts).
func (c *Client) Close() error {
	err := c.w.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
	return err
}

// Open connects the child to the cluster k names and returns where its
// sandboxes are.
func (c *Client) Open(ctx context.Context, k config.Kubernetes) (Place, error) {
	var p Place
	err := c.call(ctx, mOpen, k, &p)
	return p, err
}

// call sends method with params and decodes the answer into out (nil:
// none wanted). A context that ends first cancels the call in the child.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(request{ID: id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return fmt.Errorf("mcp-sandbox %s: %w", Command, err)
	}
	select {
	case res := <-ch:
		return decode(res, out)
	case <-ctx.Done():
		c.forget(id)
		idRaw, _ := json.Marshal(id)
		_ = c.send(request{Method: mCancel, Params: idRaw})
		return ctx.Err()
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
}

func (c *Client) send(req request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func decode(res response, out any) error {
	if res.Error != "" {
		return &remoteError{msg: res.Error, is: kinds[res.Is]}
	}
	if out == nil || len(res.Result) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result, out)
}

// lineLog logs what the child writes to stderr, a line at a time.
type lineLog struct {
	log *slog.Logger
	buf []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.log.Warn("mcp-sandbox "+Command, "said", string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 {
		l.log.Warn("mcp-sandbox "+Command, "said", string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

// errUnsupported is the error of a call the tray and the window never
// make through the child.
func errUnsupported(what string) error {
	return errors.New(what + " is not done from the tray or the window on a cluster: use an AI client or the mcp-sandbox CLI")
}
