package runner

import (
	_ "embed" // the interpreters' sources
	"strconv"
)

// Interpreter kinds, as config.Language.Runner names them.
const (
	Python = "python"
	Node   = "node"
)

var (
	//go:embed python.py
	pythonSource []byte
	//go:embed node.js
	nodeSource []byte
)

// pythonBoot reads "NONCE LENGTH\n" and the runner's source from stdin and
// runs it. It stays tiny because it is visible in ps.
const pythonBoot = `import os
def _r(n):
    b = b""
    while len(b) < n:
        c = os.read(0, n - len(b))
        if not c:
            os._exit(3)
        b += c
    return b
h = b""
while not h.endswith(b"\n"):
    h += _r(1)
_n, _l = h.split()
exec(compile(_r(int(_l)), "<mcp-sandbox-runner>", "exec"), {"__name__": "__mcp_sandbox_runner__", "NONCE": _n.decode()})
`

// nodeWrapper arranges the file descriptors Node cannot (it has no dup2):
// 3 and 4 become the frame channel, 5 diagnostics, 0 /dev/null, and 1 and 2
// FIFOs that the runner's relay thread reads. Then it runs the bootstrap.
const nodeWrapper = `command -v node >/dev/null 2>&1 || { echo "node: not found" >&2; exit 127; }
d=$(mktemp -d /tmp/.mcp-runner.XXXXXX) && mkfifo "$d/out" "$d/err" || exit 71
exec 3>&1 4<&0 5>&2 </dev/null 1<>"$d/out" 2<>"$d/err"
exec node --expose-internals -e "$1" "$d"`

// nodeBoot reads "NONCE LENGTH\n" and the runner's source from fd 4 and
// runs it as the body of function (require, NONCE, DIR). Its names live in
// a function: a top-level const of the -e script would be a global binding
// that the code's own (const fs = require('fs')) could not declare again.
const nodeBoot = `(() => { const fs = require('fs');
function r(n) { const b = Buffer.alloc(n); let o = 0; while (o < n) { let k; try { k = fs.readSync(4, b, o, n - o, null); } catch (e) { if (e.code === 'EAGAIN') continue; throw e; } if (k === 0) process.exit(3); o += k; } return b; }
let h = ''; while (!h.endsWith('\n')) h += r(1).toString('latin1');
const [nonce, len] = h.trim().split(' ');
require('vm').runInThisContext('(function (require, NONCE, DIR) {' + r(Number(len)).toString('utf8') + '\n})', { filename: 'mcp-sandbox-runner.js' })(require, nonce, process.argv[1]); })();`

// Known reports whether kind names a resident interpreter this package has.
func Known(kind string) bool { return kind == Python || kind == Node }

// Argv returns the command that starts an interpreter of kind, or nil.
func Argv(kind string) []string {
	switch kind {
	case Python:
		return []string{"python3", "-c", pythonBoot}
	case Node:
		return []string{"/bin/sh", "-c", nodeWrapper, "mcp-sandbox-runner", nodeBoot}
	}
	return nil
}

// Boot returns what to write to a new interpreter's stdin before any frame:
// the header line and the interpreter's source.
func Boot(kind, nonce string) []byte {
	var src []byte
	switch kind {
	case Python:
		src = pythonSource
	case Node:
		src = nodeSource
	default:
		return nil
	}
	b := make([]byte, 0, len(nonce)+16+len(src))
	b = append(b, nonce...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(src)), 10)
	b = append(b, '\n')
	return append(b, src...)
}
