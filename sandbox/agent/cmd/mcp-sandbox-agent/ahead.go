package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A shell started ahead. Starting a process is most of what a short
// command costs in a sandbox (the exec of /bin/sh and its dynamic loading:
// 0.55-0.65 ms here, against 0.1 ms for the same shell, already running,
// to run `true` and exit). So after a command of the form `SHELL -c TEXT`
// the agent starts the next one's shell in the background, with the same
// program, environment and working directory, its stdin /dev/null and its
// output on fresh pipes, in a session of its own, and leaves it blocked
// reading fd 3. A command that matches it in all of those (and has no
// stdin, and TEXT of at most aheadMax bytes) is written to fd 3, and that
// shell runs it with eval, as the command's process: its pid, session,
// output, exit code and everything after are the command's.
//
// What differs from `SHELL -c TEXT`: diagnostics the shell itself prints
// for TEXT's top level name eval (dash: "sh: 1: eval: foo: not found",
// not "sh: 1: foo: not found"); and the shell stays the parent of TEXT's
// last command (as dash -c does; bash -c replaces itself with it). Variables,
// positional parameters, $0, $$, $-, $?, traps, exit codes and signals are
// as with -c (tested against dash, bash and busybox).
//
// Only dash, bash and busybox are used so (others start each command
// afresh). A shell that died, or whose working directory is no longer the
// directory of that name (removed, replaced), is not used. The sandbox's
// code can reach the waiting shell as it can reach the agent (all are the
// sandbox user's, as are every command's pipes), so it gains nothing it
// did not have.
type ahead struct {
	cmd   *exec.Cmd
	ctl   *os.File    // the write end of its fd 3
	pipes [2]*os.File // the read ends of its stdout and stderr
	argv0 string
	prog  os.FileInfo // the program, as found when it was started
	dir   os.FileInfo // its working directory, likewise (nil: the agent's)
}

// aheadDelay is how long after a command's answer the next one's shell
// is started: the answer's way back to the client (the engine's stream,
// the server, stdio) takes a millisecond or so, and a start during it
// competes with it for the CPU.
const aheadDelay = 10 * time.Millisecond

// aheadMax bounds the command text sent to a waiting shell: its read
// builtin takes a byte per system call.
const aheadMax = 1024

// aheadBoot is the waiting shell's script: $1 is a newline (the script
// is one line, so that bash numbers the command's lines from 1). It reads
// a line, and runs it; a line "#N" (which give sends for text of more than
// one line, or one that starts with "#") is instead followed by the N lines
// of the text. It closes fd 3 before it runs them. A one-line command so
// costs the shell one read, as `sh -c` would cost none.
const aheadBoot = `IFS= read -r __c <&3 || exit 0; case $__c in "#"*) __n=${__c#?}; __c=; __i=0; while [ "$__i" -lt "$__n" ] && IFS= read -r __l <&3; do if [ "$__i" = 0 ]; then __c=$__l; else __c=$__c$1$__l; fi; __i=$((__i+1)); done;; esac; exec 3<&-; set -- "$__c"; unset __n __c __i __l; eval "set --; $1"`

// aheadShells are the shells aheadBoot is known to run as -c would.
var aheadShells = []string{"dash", "bash", "busybox"}

// shellForm says whether cmd (made by command) is `SHELL -c TEXT`.
func shellForm(cmd *exec.Cmd) bool {
	return len(cmd.Args) == 3 && cmd.Args[1] == "-c"
}

// aheadable says whether cmd could be served by a waiting shell.
func aheadable(cmd *exec.Cmd) bool {
	return shellForm(cmd) && len(cmd.Args[2]) <= aheadMax && !strings.ContainsRune(cmd.Args[2], 0) && cmd.Stdin == nil
}

// startAhead starts a waiting shell for commands like cmd, or returns nil.
func startAhead(cmd *exec.Cmd) *ahead {
	real, err := filepath.EvalSymlinks(cmd.Path)
	if err != nil || !slices.Contains(aheadShells, filepath.Base(real)) {
		return nil
	}
	// busybox is a shell only under a shell's name.
	if filepath.Base(real) == "busybox" && !slices.Contains([]string{"sh", "ash"}, filepath.Base(cmd.Args[0])) {
		return nil
	}
	prog, err := os.Stat(cmd.Path)
	if err != nil {
		return nil
	}
	// Its working directory, when not the agent's (which never changes).
	var dir os.FileInfo
	if cmd.Dir != "" {
		if dir, err = os.Stat(cmd.Dir); err != nil {
			return nil
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	sh := &exec.Cmd{Path: cmd.Path, Args: []string{cmd.Args[0], "-c", aheadBoot, cmd.Args[0], "\n"}, Env: cmd.Env, Dir: cmd.Dir, ExtraFiles: []*os.File{r}}
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	pipes, err := outputPipes(sh)
	if err != nil {
		_ = w.Close()
		return nil
	}
	err = sh.Start()
	sh.Stdout.(*os.File).Close()
	sh.Stderr.(*os.File).Close()
	if err != nil {
		_ = w.Close()
		_ = pipes[0].Close()
		_ = pipes[1].Close()
		return nil
	}
	return &ahead{cmd: sh, ctl: w, pipes: pipes, argv0: cmd.Args[0], prog: prog, dir: dir}
}

// matches says whether w runs cmd as cmd itself would start: the same
// program file, environment and working directory (f: cmd's files, as
// command found them).
func (w *ahead) matches(cmd *exec.Cmd, f found) bool {
	if w.argv0 != cmd.Args[0] || !slices.Equal(w.cmd.Env, cmd.Env) || w.cmd.Dir != cmd.Dir || w.cmd.Path != cmd.Path {
		return false
	}
	prog := f.prog
	if prog == nil {
		var err error
		if prog, err = os.Stat(cmd.Path); err != nil {
			return false
		}
	}
	// The directory it sits in is still the one of that name (the
	// agent's own, cmd.Dir "", is the one both inherit).
	return os.SameFile(prog, w.prog) && (cmd.Dir == "" || os.SameFile(f.dir, w.dir))
}

// give hands text to the waiting shell, which then runs it. False when the
// shell is gone (the write finds no reader).
func (w *ahead) give(text string) bool {
	var b strings.Builder
	if strings.HasPrefix(text, "#") || strings.Contains(text, "\n") {
		lines := strings.Split(text, "\n")
		b.WriteString("#" + strconv.Itoa(len(lines)) + "\n")
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	} else {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	_, err := w.ctl.WriteString(b.String())
	_ = w.ctl.Close()
	return err == nil
}

// discard ends a waiting shell that will not be used.
func (w *ahead) discard() {
	_ = w.ctl.Close()
	_ = syscall.Kill(w.cmd.Process.Pid, syscall.SIGKILL)
	_ = w.pipes[0].Close()
	_ = w.pipes[1].Close()
	go func() { _ = w.cmd.Wait() }()
}

// takeAhead returns the waiting shell if it can run cmd, having given it
// cmd's text; else nil (and a waiting shell that cannot is ended).
func (a *agent) takeAhead(cmd *exec.Cmd, f found) *ahead {
	a.mu.Lock()
	w := a.ahead
	a.ahead = nil
	a.mu.Unlock()
	if w == nil {
		return nil
	}
	if !aheadable(cmd) || !w.matches(cmd, f) || !w.give(cmd.Args[2]) {
		w.discard()
		return nil
	}
	a.mu.Lock()
	a.served++
	a.mu.Unlock()
	return w
}

// prepareAhead starts a waiting shell for the next command like cmd, in
// place of any there is.
func (a *agent) prepareAhead(cmd *exec.Cmd) {
	if !shellForm(cmd) {
		return
	}
	w := startAhead(cmd)
	if w == nil {
		return
	}
	a.mu.Lock()
	old := a.ahead
	a.ahead = w
	closing := a.closing
	a.mu.Unlock()
	if old != nil {
		old.discard()
	}
	if closing {
		a.endAhead()
	}
}

// endAhead ends the waiting shell, if any.
func (a *agent) endAhead() {
	a.mu.Lock()
	w := a.ahead
	a.ahead = nil
	a.mu.Unlock()
	if w != nil {
		w.discard()
	}
}
