package docker

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// statxProbe calls statx on each path with AT_NO_AUTOMOUNT (0x800), the
// flag GNU coreutils' stat and ls pass, and prints one word per path.
const statxProbe = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
for p in sys.argv[1:]:
    os.stat(p)  # newfstatat: must work on every runtime
    r = libc.syscall(332, -100, p.encode(), 0x800, 0x7ff, buf)
    print(p, "ok" if r == 0 else os.strerror(ctypes.get_errno()))
`

// TestStatWorkspace: `stat /workspace && ls -la /workspace` work in a
// sandbox made with every hardening option, under the test runtime. Under
// gVisor releases that reject statx's AT_NO_AUTOMOUNT flag on every path
// (20221219 does; docs/security.md, "No host access"), the failure must be that
// one and no other: stat(2) of /workspace works, and the image's own / fails
// the same way, so the workspace mount is not the cause.
func TestStatWorkspace(t *testing.T) {
	b, cli, owner := testBackend(t)
	ownerCleanup(t, b, cli, owner)
	spec := testSpec(owner)
	spec.Runtime = testenv.Runtime()
	id, err := b.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	gvisorStatx := false
	for _, cmd := range []string{"stat /workspace", "ls -la /workspace"} {
		var out, errb bytes.Buffer
		st, err := b.Exec(context.Background(), id, backend.ExecSpec{Cmd: []string{"sh", "-c", cmd}, User: "1000:1000", Stdout: &out, Stderr: &errb})
		switch {
		case err != nil:
			t.Fatal(err)
		case st.ExitCode == 0 && out.Len() > 0:
		case st.ExitCode != 0 && testenv.Runtime() == "runsc" && strings.HasSuffix(errb.String(), "'/workspace': Invalid argument\n"):
			gvisorStatx = true
		default:
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", cmd, st.ExitCode, out.String(), errb.String())
		}
	}
	if !gvisorStatx {
		return
	}
	probe := execOut(t, b, id, "1000:1000", "python3 -c '"+statxProbe+"' /workspace / /tmp")
	if want := "/workspace Invalid argument\n/ Invalid argument\n/tmp Invalid argument\n"; probe != want {
		t.Fatalf("under gVisor, statx(AT_NO_AUTOMOUNT) gave %q, want EINVAL on every path (the runtime's, not the mount's)", probe)
	}
	t.Logf("gVisor rejects statx(AT_NO_AUTOMOUNT) on every path, the image's / included; stat(2) of /workspace works")
}
