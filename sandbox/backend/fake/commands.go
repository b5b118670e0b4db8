package fake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Commands are the programs a fake container can run, by base name: the
// simulated command table. Anything else exits 127 ("not found"), as in an
// image without it. /bin/sh -c runs its script with a POSIX shell
// interpreter (mvdan.cc/sh) whose files are the container's in-memory ones
// and whose commands are these.
var Commands = []string{
	"sh", "true", "false", "echo", "printf", "pwd", "cat", "sleep", "id", "touch", "mkdir",
	"ln", "stat", "ls", "head", "grep", "seq", "cut", "setsid", "rm",
}

// env is what a process sees: its container's file system and user.
type env struct {
	fs       *memfs
	uid, gid int
	vars     []string // KEY=VALUE, for processes run directly
}

// exitErr is a process's exit code.
type exitErr int

func (e exitErr) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// codeOf turns what a process returned into its exit code; -1 means it was
// killed (ctx ended).
func codeOf(ctx context.Context, err error) int {
	if ctx.Err() != nil {
		return -1
	}
	var ee exitErr
	if errors.As(err, &ee) {
		return int(ee)
	}
	if s, ok := interp.IsExitStatus(err); ok {
		return int(s)
	}
	if err != nil {
		return 1
	}
	return 0
}

// run runs argv in dir and returns its exit code (-1: killed by ctx).
func (e *env) run(ctx context.Context, argv []string, dir string, stdin io.Reader, stdout, stderr io.Writer) int {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return codeOf(ctx, e.call(ctx, argv, dir, stdin, stdout, stderr, nil))
}

// call runs one command of the table. shell, when set, is the calling
// shell's environment (for setsid's command).
func (e *env) call(ctx context.Context, argv []string, dir string, stdin io.Reader, stdout, stderr io.Writer, shell expand.Environ) error {
	c := &invocation{ctx: ctx, name: path.Base(argv[0]), args: argv[1:], dir: dir, stdin: stdin, stdout: stdout, stderr: stderr, shell: shell}
	if run, ok := builtins[c.name]; ok {
		return run(e, c)
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", argv[0])
	return exitErr(127)
}

func (e *env) ls(args []string, abs func(string) string, stdout, stderr io.Writer) error {
	all, long := false, false
	var paths []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			all = all || strings.ContainsAny(a, "aA")
			long = long || strings.Contains(a, "l")
			continue
		}
		paths = append(paths, a)
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var code error
	line := func(name string, n *node) {
		if !long {
			fmt.Fprintln(stdout, name)
			return
		}
		fmt.Fprintf(stdout, "%s %d %d %d %d %s\n", n.mode.String(), e.fs.links(n), n.uid, n.gid, len(n.data), name)
	}
	for _, p := range paths {
		n, rp, err := e.fs.stat(abs(p))
		if err != nil {
			fmt.Fprintf(stderr, "ls: %s: %v\n", p, unwrapPath(err))
			code = exitErr(2)
			continue
		}
		if !n.mode.IsDir() {
			line(p, n)
			continue
		}
		for _, name := range e.fs.list(rp) {
			if !all && strings.HasPrefix(name, ".") {
				continue
			}
			c, _, err := e.fs.lstat(path.Join(rp, name))
			if err == nil {
				line(name, c)
			}
		}
	}
	return code
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ctxReader ends a read when ctx does (the process was killed).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// shell runs sh's arguments: -c SCRIPT [NAME [ARGS…]].
func (e *env) shell(ctx context.Context, args []string, dir string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) < 2 || args[0] != "-c" {
		fmt.Fprintln(stderr, "sh: only sh -c SCRIPT is simulated")
		return exitErr(2)
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(args[1]), "sh")
	if err != nil {
		fmt.Fprintf(stderr, "sh: %v\n", err)
		return exitErr(2)
	}
	// The interpreter gives every command an *os.File stdin; none at all
	// when the process has none (reading it is EOF). Otherwise the pipe is
	// ours, so that its feeding goroutine ends with the process even when
	// the script left its stdin unread (its writes then fail).
	var in *os.File
	if r, ok := stdin.(*strings.Reader); !ok || r.Len() > 0 {
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		go func() {
			_, _ = io.Copy(pw, stdin)
			_ = pw.Close()
		}()
		defer pr.Close()
		in = pr
	}
	r, err := interp.New(append([]interp.RunnerOption{
		interp.StdIO(in, stdout, stderr),
		interp.Env(expand.ListEnviron(e.vars...)),
	}, e.shellHandlers()...)...)
	if err != nil {
		return err
	}
	r.Dir = dir
	if len(args) > 3 {
		r.Params = args[3:]
	}
	return r.Run(ctx, file)
}

// shellHandlers make the shell's commands those of the table and its
// files the container's.
func (e *env) shellHandlers() []interp.RunnerOption {
	return []interp.RunnerOption{
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, argv []string) error {
				hc := interp.HandlerCtx(ctx)
				in := hc.Stdin
				if in == nil {
					in = strings.NewReader("")
				}
				err := e.call(ctx, argv, hc.Dir, in, hc.Stdout, hc.Stderr, hc.Env)
				var ee exitErr
				if errors.As(err, &ee) {
					// A command's exit status, not a fault of the shell.
					return interp.NewExitStatus(uint8(ee))
				}
				return err
			}
		}),
		interp.OpenHandler(func(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			return e.fs.open(absIn(ctx, p), flag, perm, e.uid, e.gid)
		}),
		interp.StatHandler(func(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
			name = absIn(ctx, name)
			var n *node
			var err error
			if follow {
				n, _, err = e.fs.stat(name)
			} else {
				n, _, err = e.fs.lstat(name)
			}
			if err != nil {
				return nil, err
			}
			return e.fs.info(name, n), nil
		}),
		interp.ReadDirHandler2(func(ctx context.Context, p string) ([]fs.DirEntry, error) {
			_, rp, err := e.fs.stat(absIn(ctx, p))
			if err != nil {
				return nil, err
			}
			var out []fs.DirEntry
			for _, name := range e.fs.list(rp) {
				if n, _, err := e.fs.lstat(path.Join(rp, name)); err == nil {
					out = append(out, fs.FileInfoToDirEntry(e.fs.info(name, n)))
				}
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
			return out, nil
		}),
		interp.AccessHandler(func(ctx context.Context, p string, mode interp.AccessMode) error {
			_, _, err := e.fs.stat(absIn(ctx, p))
			return err
		}),
	}
}

// absIn makes p absolute against the shell's working directory.
func absIn(ctx context.Context, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(interp.HandlerCtx(ctx).Dir, p)
}
