package interp

import "github.com/mcp-sandbox/mcp-sandbox/sandbox/config"

// Shell is the config's runner name for bash, whose session is a script
// rather than a resident interpreter: each call is one exec of it.
const Shell = "shell"

// ShellProgram runs every bash run_code, whatever the language's run
// says: the session script needs bash's compgen, declare -p and alias -p.
const ShellProgram = "bash"

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

// ShellArgv is the command of a bash run_code whose code is in the file
// "{file}": a shell session that carries its state over from the last
// call in the sandbox (reset: start afresh). Calls in one sandbox must
// run one at a time so they do not race on the state.
func ShellArgv(reset bool) []string {
	r := "0"
	if reset {
		r = "1"
	}
	return []string{ShellProgram, "-c", shellSession, "mcp-sandbox-shell", r, "{file}"}
}

// Program is the program run_code in lang cannot do without, which
// doctor and the tray's health check look for in the language's image: bash
// for the shell runner, else the first word of the language's run (a
// resident interpreter that cannot start falls back to it).
func Program(lang config.Language) string {
	if lang.Runner == Shell {
		return ShellProgram
	}
	if len(lang.Run) == 0 {
		return ""
	}
	return lang.Run[0]
}
