package fake

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

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
	name := path.Base(argv[0])
	args := argv[1:]
	abs := func(p string) string {
		if path.IsAbs(p) {
			return path.Clean(p)
		}
		return path.Join(dir, p)
	}
	fail := func(format string, a ...any) error {
		fmt.Fprintf(stderr, name+": "+format+"\n", a...)
		return exitErr(1)
	}
	switch name {
	case "sh", "bash", "ash":
		return e.shell(ctx, args, dir, stdin, stdout, stderr)
	case "true":
		return nil
	case "false":
		return exitErr(1)
	case "echo":
		fmt.Fprintln(stdout, strings.Join(args, " "))
		return nil
	case "printf":
		if len(args) == 0 {
			return exitErr(1)
		}
		fmt.Fprint(stdout, strings.ReplaceAll(args[0], `\n`, "\n"))
		return nil
	case "pwd":
		fmt.Fprintln(stdout, dir)
		return nil
	case "sleep":
		if len(args) != 1 {
			return fail("usage: sleep SECONDS")
		}
		secs, err := strconv.ParseFloat(args[0], 64)
		if err != nil {
			return fail("invalid time %q", args[0])
		}
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case "setsid":
		if len(args) == 0 {
			return fail("usage: setsid COMMAND")
		}
		return e.call(ctx, args, dir, stdin, stdout, stderr, shell)
	case "id":
		switch {
		case len(args) == 1 && args[0] == "-u":
			fmt.Fprintln(stdout, e.uid)
		case len(args) == 1 && args[0] == "-g":
			fmt.Fprintln(stdout, e.gid)
		default:
			fmt.Fprintf(stdout, "uid=%d gid=%d\n", e.uid, e.gid)
		}
		return nil
	case "cat":
		if len(args) == 0 {
			_, err := io.Copy(stdout, ctxReader{ctx, stdin})
			return err
		}
		for _, a := range args {
			if a == "-" {
				if _, err := io.Copy(stdout, ctxReader{ctx, stdin}); err != nil {
					return err
				}
				continue
			}
			b, err := e.fs.read(abs(a))
			if err != nil {
				return fail("%s: %v", a, unwrapPath(err))
			}
			_, _ = stdout.Write(b)
		}
		return nil
	case "head":
		if len(args) >= 2 && args[0] == "-c" {
			n, _ := strconv.Atoi(args[1])
			var in io.Reader = stdin
			if len(args) > 2 {
				b, err := e.fs.read(abs(args[2]))
				if err != nil {
					return fail("%v", unwrapPath(err))
				}
				in = bytes.NewReader(b)
			}
			b, _ := io.ReadAll(in) // read it all, as a pipe's writer expects
			_, _ = stdout.Write(b[:min(n, len(b))])
			return nil
		}
		return fail("only -c is simulated")
	case "touch":
		for _, a := range args {
			if _, err := e.fs.create(abs(a), 0o644, e.uid, e.gid, false, false); err != nil {
				return fail("%s: %v", a, unwrapPath(err))
			}
		}
		return nil
	case "mkdir":
		parents := false
		var code error
		for _, a := range args {
			if a == "-p" {
				parents = true
				continue
			}
			if err := e.fs.mkdir(abs(a), e.uid, e.gid, parents); err != nil {
				code = fail("%s: %v", a, unwrapPath(err))
			}
		}
		return code
	case "rm":
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			e.fs.remove(abs(a))
		}
		return nil
	case "ln":
		symbolic, force := false, false
		var rest []string
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				symbolic = symbolic || strings.Contains(a, "s")
				force = force || strings.Contains(a, "f")
				continue
			}
			rest = append(rest, a)
		}
		if len(rest) != 2 {
			return fail("usage: ln [-sf] TARGET LINK")
		}
		target := rest[0]
		if !symbolic {
			target = abs(target)
		}
		if err := e.fs.link(target, abs(rest[1]), symbolic, force, e.uid, e.gid); err != nil {
			return fail("%s: %v", rest[1], unwrapPath(err))
		}
		return nil
	case "stat":
		if len(args) != 3 || args[0] != "-c" {
			return fail("only stat -c FORMAT FILE is simulated")
		}
		n, _, err := e.fs.lstat(abs(args[2]))
		if err != nil {
			return fail("%v", unwrapPath(err))
		}
		fi := e.fs.info(args[2], n)
		r := strings.NewReplacer("%a", strconv.FormatUint(uint64(n.mode.Perm()), 8), "%s", strconv.FormatInt(fi.size, 10), "%n", args[2])
		fmt.Fprintln(stdout, r.Replace(args[1]))
		return nil
	case "ls":
		return e.ls(args, abs, stdout, stderr)
	case "grep":
		invert := false
		if len(args) > 0 && args[0] == "-v" {
			invert, args = true, args[1:]
		}
		if len(args) != 1 {
			return fail("only grep [-v] PATTERN is simulated")
		}
		re, err := regexp.Compile(args[0])
		if err != nil {
			return exitErr(2)
		}
		found := false
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			if re.MatchString(sc.Text()) != invert {
				found = true
				fmt.Fprintln(stdout, sc.Text())
			}
		}
		if !found {
			return exitErr(1)
		}
		return nil
	case "seq":
		if len(args) != 2 {
			return fail("only seq FIRST LAST is simulated")
		}
		a, _ := strconv.Atoi(args[0])
		b, _ := strconv.Atoi(args[1])
		for i := a; i <= b; i++ {
			fmt.Fprintln(stdout, i)
		}
		return nil
	case "cut":
		delim, field := "\t", 0
		var files []string
		for i := 0; i < len(args); i++ {
			switch {
			case strings.HasPrefix(args[i], "-d"):
				delim = strings.TrimPrefix(args[i], "-d")
			case strings.HasPrefix(args[i], "-f"):
				field, _ = strconv.Atoi(strings.TrimPrefix(args[i], "-f"))
			default:
				files = append(files, args[i])
			}
		}
		var in io.Reader = stdin
		if len(files) == 1 {
			b, err := e.fs.read(abs(files[0]))
			if err != nil {
				return fail("%v", unwrapPath(err))
			}
			in = bytes.NewReader(b)
		}
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			f := strings.Split(sc.Text(), delim)
			if field >= 1 && field <= len(f) {
				fmt.Fprintln(stdout, f[field-1])
			} else {
				fmt.Fprintln(stdout)
			}
		}
		return nil
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
	r, err := interp.New(
		interp.StdIO(in, stdout, stderr),
		interp.Env(expand.ListEnviron(e.vars...)),
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
	)
	if err != nil {
		return err
	}
	r.Dir = dir
	if len(args) > 3 {
		r.Params = args[3:]
	}
	return r.Run(ctx, file)
}

// absIn makes p absolute against the shell's working directory.
func absIn(ctx context.Context, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(interp.HandlerCtx(ctx).Dir, p)
}
