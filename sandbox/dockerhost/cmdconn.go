package dockerhost

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// cmdConn is a net.Conn over a command's stdin and stdout, the transport of
// ssh:// endpoints. Closing it ends the command.
type cmdConn struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of the command's stdin
	stdout *os.File // our end of the command's stdout
	stderr *tailBuffer

	exited  chan struct{} // closed when the command has been waited for
	waitErr error         // set before exited is closed

	closeOnce sync.Once
}

// dialCommand starts name with args and returns a connection to it. The
// command outlives ctx on purpose: ctx bounds the dial, while HTTP keeps the
// connection for later requests; Close ends it.
func dialCommand(ctx context.Context, name string, args ...string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &cmdConn{
		cmd:    exec.Command(name, args...),
		stdin:  inW,
		stdout: outR,
		stderr: &tailBuffer{max: 4096},
		exited: make(chan struct{}),
	}
	c.cmd.Stdin = inR
	c.cmd.Stdout = outW
	c.cmd.Stderr = c.stderr
	// A grandchild that keeps stderr open (an ssh ControlMaster) must not
	// keep Wait from returning.
	c.cmd.WaitDelay = time.Second
	err = c.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Read reads from the command's stdout. When the command has ended, the
// error carries what it wrote to stderr, which is where ssh explains itself.
func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.stdout.Read(p)
	if err == io.EOF {
		select {
		case <-c.exited:
		case <-time.After(time.Second):
			return n, err
		}
		if msg := strings.TrimSpace(c.stderr.String()); c.waitErr != nil || msg != "" {
			return n, fmt.Errorf("%s exited (%v): %s", c.cmd.Path, c.waitErr, msg)
		}
	}
	return n, err
}

// Write writes to the command's stdin.
func (c *cmdConn) Write(p []byte) (int, error) {
	return c.stdin.Write(p)
}

// Close ends the command and waits for it.
func (c *cmdConn) Close() error {
	c.closeOnce.Do(func() {
		c.stdin.Close()
		if c.cmd.Process != nil {
			// Already gone is fine: the command may have ended on its own.
			_ = c.cmd.Process.Kill()
		}
		<-c.exited
		c.stdout.Close()
	})
	return nil
}

// LocalAddr returns a placeholder address: the connection is a process.
func (c *cmdConn) LocalAddr() net.Addr { return cmdAddr("local") }

// RemoteAddr returns a placeholder address naming the command.
func (c *cmdConn) RemoteAddr() net.Addr { return cmdAddr(c.cmd.Path) }

// SetDeadline is a no-op; requests are bounded by their contexts, and
// closing the connection ends the command.
func (c *cmdConn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline is a no-op; see SetDeadline.
func (c *cmdConn) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline is a no-op; see SetDeadline.
func (c *cmdConn) SetWriteDeadline(time.Time) error { return nil }

type cmdAddr string

func (a cmdAddr) Network() string { return "cmd" }
func (a cmdAddr) String() string  { return string(a) }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

var _ net.Conn = (*cmdConn)(nil)
