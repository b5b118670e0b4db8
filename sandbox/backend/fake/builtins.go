package fake

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
)

// invocation is one run of a simulated command: what it was given.
type invocation struct {
	ctx            context.Context
	name           string // argv[0]'s base name
	args           []string
	dir            string
	stdin          io.Reader
	stdout, stderr io.Writer
	shell          expand.Environ // the calling shell's environment, or nil
}

// abs makes p absolute against the command's working directory.
func (c *invocation) abs(p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(c.dir, p)
}

// fail writes "NAME: message" to stderr and exits 1.
func (c *invocation) fail(format string, a ...any) error {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", a...)
	return exitErr(1)
}

// builtins simulates each of Commands, by name (set in init: setsid's
// command goes through call, which reads the table).
var builtins map[string]func(*env, *invocation) error

func init() {
	builtins = map[string]func(*env, *invocation) error{
		"sh":     (*env).cmdSh,
		"bash":   (*env).cmdSh,
		"ash":    (*env).cmdSh,
		"true":   (*env).cmdTrue,
		"false":  (*env).cmdFalse,
		"echo":   (*env).cmdEcho,
		"printf": (*env).cmdPrintf,
		"pwd":    (*env).cmdPwd,
		"sleep":  (*env).cmdSleep,
		"setsid": (*env).cmdSetsid,
		"id":     (*env).cmdID,
		"cat":    (*env).cmdCat,
		"head":   (*env).cmdHead,
		"touch":  (*env).cmdTouch,
		"mkdir":  (*env).cmdMkdir,
		"rm":     (*env).cmdRm,
		"ln":     (*env).cmdLn,
		"stat":   (*env).cmdStat,
		"ls":     (*env).cmdLs,
		"grep":   (*env).cmdGrep,
		"seq":    (*env).cmdSeq,
		"cut":    (*env).cmdCut,
	}
}

// cmdSh runs a shell script (sh -c SCRIPT [NAME ARGS...]).
func (e *env) cmdSh(c *invocation) error {
	return e.shell(c.ctx, c.args, c.dir, c.stdin, c.stdout, c.stderr)
}

// cmdTrue exits 0.
func (e *env) cmdTrue(c *invocation) error {
	return nil
}

// cmdFalse exits 1.
func (e *env) cmdFalse(c *invocation) error {
	return exitErr(1)
}

// cmdEcho prints its arguments.
func (e *env) cmdEcho(c *invocation) error {
	fmt.Fprintln(c.stdout, strings.Join(c.args, " "))
	return nil
}

// cmdPrintf prints its format, \n made a newline.
func (e *env) cmdPrintf(c *invocation) error {
	args, stdout := c.args, c.stdout
	if len(args) == 0 {
		return exitErr(1)
	}
	fmt.Fprint(stdout, strings.ReplaceAll(args[0], `\n`, "\n"))
	return nil
}

// cmdPwd prints the working directory.
func (e *env) cmdPwd(c *invocation) error {
	fmt.Fprintln(c.stdout, c.dir)
	return nil
}

// cmdSleep waits SECONDS, or until the process is killed.
func (e *env) cmdSleep(c *invocation) error {
	ctx, args, fail := c.ctx, c.args, c.fail
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
}

// cmdSetsid runs its command.
func (e *env) cmdSetsid(c *invocation) error {
	if len(c.args) == 0 {
		return c.fail("usage: setsid COMMAND")
	}
	return e.call(c.ctx, c.args, c.dir, c.stdin, c.stdout, c.stderr, c.shell)
}

// cmdID prints the user (-u), group (-g) or both.
func (e *env) cmdID(c *invocation) error {
	args, stdout := c.args, c.stdout
	switch {
	case len(args) == 1 && args[0] == "-u":
		fmt.Fprintln(stdout, e.uid)
	case len(args) == 1 && args[0] == "-g":
		fmt.Fprintln(stdout, e.gid)
	default:
		fmt.Fprintf(stdout, "uid=%d gid=%d\n", e.uid, e.gid)
	}
	return nil
}

// cmdCat copies files, or stdin (-), to stdout.
func (e *env) cmdCat(c *invocation) error {
	ctx, args, stdin, stdout, abs, fail := c.ctx, c.args, c.stdin, c.stdout, c.abs, c.fail
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
}

// cmdHead copies the first -c N bytes.
func (e *env) cmdHead(c *invocation) error {
	args, stdin, stdout, abs, fail := c.args, c.stdin, c.stdout, c.abs, c.fail
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
}

// cmdTouch creates empty files.
func (e *env) cmdTouch(c *invocation) error {
	args, abs, fail := c.args, c.abs, c.fail
	for _, a := range args {
		if _, err := e.fs.create(abs(a), 0o644, e.uid, e.gid, false, false); err != nil {
			return fail("%s: %v", a, unwrapPath(err))
		}
	}
	return nil
}

// cmdMkdir makes directories (-p: with parents).
func (e *env) cmdMkdir(c *invocation) error {
	args, abs, fail := c.args, c.abs, c.fail
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
}

// cmdRm removes files and trees.
func (e *env) cmdRm(c *invocation) error {
	args, abs := c.args, c.abs
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		e.fs.remove(abs(a))
	}
	return nil
}

// cmdLn makes a link (-s: symbolic; -f: replacing).
func (e *env) cmdLn(c *invocation) error {
	args, abs, fail := c.args, c.abs, c.fail
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
}

// cmdStat prints stat -c FORMAT (%a %s %n) of a file.
func (e *env) cmdStat(c *invocation) error {
	args, stdout, abs, fail := c.args, c.stdout, c.abs, c.fail
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
}

// cmdLs lists files.
func (e *env) cmdLs(c *invocation) error {
	return e.ls(c.args, c.abs, c.stdout, c.stderr)
}

// cmdGrep prints the lines of stdin that match (-v: that do not).
func (e *env) cmdGrep(c *invocation) error {
	args, stdin, stdout, fail := c.args, c.stdin, c.stdout, c.fail
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
}

// cmdSeq prints FIRST to LAST.
func (e *env) cmdSeq(c *invocation) error {
	args, stdout, fail := c.args, c.stdout, c.fail
	if len(args) != 2 {
		return fail("only seq FIRST LAST is simulated")
	}
	a, _ := strconv.Atoi(args[0])
	b, _ := strconv.Atoi(args[1])
	for i := a; i <= b; i++ {
		fmt.Fprintln(stdout, i)
	}
	return nil
}

// cmdCut prints one field (-f) of each line, split at -d.
func (e *env) cmdCut(c *invocation) error {
	args, stdin, stdout, abs, fail := c.args, c.stdin, c.stdout, c.abs, c.fail
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
