package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/server"
)

func init() {
	register(command{name: "run", summary: "run a file (or - for stdin) once in a fresh sandbox", run: runRun})
}

// Exit codes of run besides the program's own, as docker run has them:
// the program's code passes through, so run's own failures take codes a
// program rarely uses. 126 (the program cannot be invoked) and 127 (its
// interpreter is not in the image) come from the sandbox's shell as they
// are.
const (
	exitRunFailed   = 125 // run itself failed: bad flags, no engine, refused by the policy
	exitInterrupted = 130 // SIGINT or SIGTERM
)

func runRun(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "run", "[--lang LANGUAGE] [--timeout DURATION] FILE|-")
	lang := fs.String("lang", "", "`LANGUAGE` (default: from the file's extension, else python)")
	var timeout durationValue
	fs.Var(&timeout, "timeout", "kill the run after this `DURATION`, e.g. 30s or 2m; a plain number is seconds (default: limits.exec_timeout_seconds)")
	if code, done := parseFlagsExit(e, fs, args, exitRunFailed); done {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitRunFailed
	}
	seconds := 0
	if timeout > 0 {
		// The engine counts whole seconds; round a shorter part up so that
		// a timeout is never shorter than asked.
		seconds = int((time.Duration(timeout) + time.Second - 1) / time.Second)
	}
	file := fs.Arg(0)
	var code []byte
	var err error
	if file == "-" {
		code, err = io.ReadAll(io.LimitReader(e.Stdin, 8<<20))
	} else {
		code, err = os.ReadFile(file)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return exitRunFailed
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := newSetup(ctx, e, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return exitRunFailed
	}
	defer s.close()
	if *lang == "" {
		*lang = languageOfFile(s.cfg.Current().LanguageNames(), file, func(n string) string {
			l, _ := s.cfg.Current().Language(n)
			return l.Extension
		})
	}
	eng, closeEngine := runEngine(ctx, s)
	defer closeEngine()
	var mu sync.Mutex
	res, err := eng.RunCode(ctx, sandbox.RunCodeRequest{Code: string(code), Language: *lang, TimeoutSeconds: seconds, Client: "mcp-sandbox run", Output: func(stream string, p []byte) {
		mu.Lock()
		defer mu.Unlock()
		if stream == "stderr" {
			e.Stderr.Write(p)
		} else {
			e.Stdout.Write(p)
		}
	}})
	defer res.Release()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitInterrupted
		}
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return exitRunFailed
	}
	if res.Truncated {
		fmt.Fprintln(e.Stderr, "mcp-sandbox: output was longer than limits.output_bytes; all of it was shown above")
	}
	if res.TimedOut {
		fmt.Fprintln(e.Stderr, "mcp-sandbox: timed out")
	}
	return res.ExitCode
}

// languageOfFile picks the language whose extension the file has.
func languageOfFile(names []string, file string, ext func(string) string) string {
	x := strings.ToLower(filepath.Ext(file))
	for _, n := range names {
		if x != "" && ext(n) == x {
			return n
		}
	}
	return ""
}

// runEngine returns run's engine, watched by a watchdog: killed, or dead
// of SIGPIPE when its output is piped into a program that stopped reading
// (`| head`), run leaves nothing either. The function it returns closes
// the engine and releases the watchdog.
func runEngine(ctx context.Context, s *setup) (*sandbox.Engine, func()) {
	eng := sandbox.NewEngine(sandbox.Options{Backend: s.backend, Config: s.cfg, State: s.state})
	wctx, cancelWatchdog := context.WithCancel(context.WithoutCancel(ctx))
	wd := server.StartWatchdog(wctx, slog.New(slog.DiscardHandler), server.WatchdogArgs{Owner: eng.Owner(), ConfigHost: s.configHost, ConfigFile: s.cfg.Current().Source, Backend: s.backendKind()})
	return eng, func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if eng.Close(cctx) == nil {
			wd.Release()
		}
		cancelWatchdog()
	}
}
