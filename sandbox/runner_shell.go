package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// shellRunner is the config's runner name for bash.
const shellRunner = "shell"

// shellProgram runs every bash run_code, whatever the language's run
// says: the session script needs bash's compgen, declare -p and alias -p.
const shellProgram = "bash"

// RunProgram is the program run_code in lang cannot do without, which
// doctor and the tray's health check look for in the language's image: bash
// for the shell runner, else the first word of the language's run (a
// resident interpreter that cannot start falls back to it).
func RunProgram(lang config.Language) string {
	if lang.Runner == shellRunner {
		return shellProgram
	}
	if len(lang.Run) == 0 {
		return ""
	}
	return lang.Run[0]
}

// shellStateFile holds what a bash run leaves for the next one.
const shellStateFile = "/tmp/.mcp-sandbox/shell-state"

// shellSession runs a code file the way a shell session would: it restores
// the working directory, variables (exported or not), functions and aliases
// that the previous run left, sources the file, and saves them again, also
// when the code calls exit. Shell options (set -e, …) are not carried over.
// $1 is "1" to start afresh, $2 the code file.
const shellSession = `__mcp_state=` + shellStateFile + `
__mcp_file=$2
[ "$1" = 1 ] && rm -f "$__mcp_state"
set --
[ -r "$__mcp_state" ] && . "$__mcp_state" >/dev/null 2>&1
__mcp_save() {
  local __mcp_rc=$? __mcp_v
  mkdir -p "${__mcp_state%/*}" 2>/dev/null
  {
    for __mcp_v in $(compgen -v); do
      case $__mcp_v in
        __mcp_*|BASH|BASH_*|BASHOPTS|BASHPID|COLUMNS|COMP_*|DIRSTACK|EPOCHREALTIME|EPOCHSECONDS|EUID|FUNCNAME|GROUPS|HISTCMD|HOSTNAME|HOSTTYPE|LINENO|LINES|MACHTYPE|OPTERR|OPTIND|OSTYPE|PIPESTATUS|PPID|PWD|RANDOM|SECONDS|SHELLOPTS|SHLVL|SRANDOM|UID|_) continue ;;
      esac
      declare -p "$__mcp_v" 2>/dev/null
    done
    declare -f
    alias -p
    printf 'cd -- %q\n' "$PWD"
  } >"$__mcp_state.tmp" 2>/dev/null && mv -f "$__mcp_state.tmp" "$__mcp_state"
  return $__mcp_rc
}
trap __mcp_save EXIT
. "$__mcp_file"`

// runShell runs bash code with a shell session's state carried between
// calls in the same sandbox (see shellSession). Calls in one sandbox run
// one at a time so they do not race on the state.
func (e *Engine) runShell(ctx context.Context, sb *Sandbox, lang config.Language, req RunRequest, timeout time.Duration, out OutputFunc) (ExecResult, error) {
	slot, err := sb.slot(shellRunner)
	if err != nil {
		return ExecResult{}, fmt.Errorf("%w: sandbox %s is being stopped", ErrNotFound, sb.ID)
	}
	if err := slot.acquire(ctx, holderCall, req.Waiting); err != nil {
		return ExecResult{}, fmt.Errorf("cancelled while waiting for the previous run: %w", err)
	}
	defer slot.release()
	reset := "0"
	if req.Reset {
		reset = "1"
	}
	argv := []string{shellProgram, "-c", shellSession, "mcp-sandbox-shell", reset, "{file}"}
	return e.runFile(ctx, sb, argv, lang.Extension, req.Code, timeout, out)
}
