package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// execWrapper announces the process's PID (inside the container) on the
// first line of stdout, changes to the working directory ($1, when not
// empty), exports the environment (the arguments up to "--"), then
// becomes the command. The pods exec subresource has no working
// directory, environment or user of its own; the wrapper keeps no state in
// variables, so no exported name can change what it does.
var execWrapper = []string{"/bin/sh", "-c",
	`echo "$$"; [ -z "$1" ] || cd "$1" || exit 126; shift; while [ "$1" != -- ]; do export "$1" || exit 127; shift; done; shift; exec "$@"`,
	"mcp-sandbox"}

// waitedScript is execWrapper's script for Exec: the command runs as the
// wrapper's child, and when it exits the wrapper writes a trailer line
// with its exit status to stdout and to stderr, after everything the
// command wrote there: "\n" NONCE " " STATUS "\n". Exec ends the stream
// once both are in (each stream is relayed on its own, so only both say
// that nothing the command wrote is still on its way), and a process the
// command left in the background holding them open (a server started
// with &) does not keep Exec waiting, as on Docker. The wrapper keeps the
// status in its positional parameters, not a variable an exported name
// could change. A sandbox process that reads the nonce can only end its
// own exec early.
func waitedScript(nonce string) string {
	return strings.TrimSuffix(execWrapper[2], `exec "$@"`) +
		`"$@"; set -- "$?"; printf '\n%s %d\n' ` + nonce + ` "$1"; printf '\n%s %d\n' ` + nonce + ` "$1" >&2`
}

// wrapped is spec.Cmd behind execWrapper (its script replaced by script,
// when not empty).
func wrapped(spec backend.ExecSpec, script string) ([]string, error) {
	if len(spec.Cmd) == 0 {
		return nil, errors.New("exec: empty command")
	}
	argv := append([]string{}, execWrapper...)
	if script != "" {
		argv[2] = script
	}
	argv = append(argv, spec.WorkDir)
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("exec: environment entry %q is not KEY=VALUE", kv)
		}
		argv = append(argv, kv)
	}
	return append(append(argv, "--"), spec.Cmd...), nil
}

// executor is a stream of argv in the sandbox container through the pods
// exec subresource, over WebSocket, falling back to SPDY where the API
// server or a proxy cannot upgrade to it.
func (b *Backend) executor(containerID string, argv []string, stdin bool) (remotecommand.Executor, error) {
	if !dnsLabel.MatchString(containerID) {
		return nil, fmt.Errorf("kubernetes: no sandbox pod %q", containerID)
	}
	req := b.cs.coreREST.Post().Resource("pods").Namespace(b.namespace).Name(containerID).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: ContainerName, Command: argv, Stdin: stdin, Stdout: true, Stderr: true,
	}, parameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(b.rest, "GET", req.URL().String())
	if err != nil {
		return nil, b.wrap("exec", err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(b.rest, "POST", req.URL())
	if err != nil {
		return nil, b.wrap("exec", err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, httpstream.IsUpgradeFailure)
	return ex, b.wrap("exec", err)
}

// checkUser refuses an exec user other than the pod's: every process of a
// pod runs as its security context's user.
func (b *Backend) checkUser(ctx context.Context, containerID, user string) error {
	if user == "" {
		return nil
	}
	uid, gid, err := backend.ParseUser(user)
	if err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	u, ok := b.knownUser(containerID)
	if !ok {
		pod, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
		if err != nil {
			return b.wrap("get pod "+containerID, err)
		}
		u = b.noteUser(pod)
	}
	if u != fmt.Sprintf("%d:%d", uid, gid) {
		return fmt.Errorf("kubernetes: exec as %q in a pod that runs as %q", user, u)
	}
	return nil
}

// noteUser remembers pod's user (AnnotationUser, as its security context
// says: a pod's spec does not change), so that the next exec's checkUser
// needs no Get; Remove forgets it. It returns the user.
func (b *Backend) noteUser(pod *corev1.Pod) string {
	u := pod.Annotations[AnnotationUser]
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.users == nil {
		b.users = map[string]string{}
	}
	b.users[pod.Name] = u
	return u
}

func (b *Backend) knownUser(containerID string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.users[containerID]
	return u, ok
}

// exitStatus turns the stream's end into an exit status; a non-zero exit
// is not an error.
func exitStatus(err error) (backend.ExecStatus, error) {
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return backend.ExecStatus{ExitCode: ee.ExitStatus()}, nil
	}
	if err != nil {
		return backend.ExecStatus{ExitCode: -1}, err
	}
	return backend.ExecStatus{}, nil
}

// Exec runs spec.Cmd in the sandbox container. When ctx ends first, it
// kills the process and everything it started, then returns ctx.Err().
func (b *Backend) Exec(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.ExecStatus, error) {
	nonce := randomHex(16)
	argv, err := wrapped(spec, waitedScript(nonce))
	if err != nil {
		return backend.ExecStatus{}, err
	}
	if err := b.checkUser(ctx, containerID, spec.User); err != nil {
		return backend.ExecStatus{}, err
	}
	ex, err := b.executor(containerID, argv, spec.Stdin != nil)
	if err != nil {
		return backend.ExecStatus{}, err
	}
	out := newOutput(spec.Stdout, spec.Stderr)
	trailer := newTrailerWriter(out.stdout(), "\n"+nonce+" ")
	errTrailer := newTrailerWriter(out.stderr(), "\n"+nonce+" ")
	pid := backend.NewPIDWriter(trailer)
	// The stream's own context: it outlives ctx until the kill is done.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	bothSeen := make(chan struct{})
	go func() {
		// Ends when Exec returns, at the latest (sctx).
		for _, seen := range []chan struct{}{trailer.seen, errTrailer.seen} {
			select {
			case <-seen:
			case <-sctx.Done():
				return
			}
		}
		close(bothSeen)
	}()
	streamed := make(chan error, 1)
	go func() {
		streamed <- ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: spec.Stdin, Stdout: pid, Stderr: errTrailer})
	}()
	select {
	case err := <-streamed:
		errTrailer.status() // (passes on what it held back)
		if code, ok := trailer.status(); ok {
			return backend.ExecStatus{ExitCode: code}, nil
		}
		st, err := exitStatus(err)
		return st, b.wrap("exec in "+containerID, err)
	case <-bothSeen:
		// The command exited; what it left running keeps running, its
		// output no longer read.
		out.close()
		cancel()
		b.awaitCut(streamed, containerID)
		code, _ := trailer.status()
		return backend.ExecStatus{ExitCode: code}, nil
	case <-ctx.Done():
	}
	return b.cancelled(ctx, containerID, pid, &execRun{
		streamed: streamed, bothSeen: bothSeen, trailer: trailer, errTrailer: errTrailer, out: out, cancel: cancel,
	})
}

// execRun is an Exec's stream in flight.
type execRun struct {
	streamed            chan error
	bothSeen            chan struct{}
	trailer, errTrailer *trailerWriter
	out                 *output
	cancel              context.CancelFunc
}

// cancelled ends an Exec whose ctx ended: it kills the process tree, lets
// the stream end on its own for a moment, then cuts it.
func (b *Backend) cancelled(ctx context.Context, containerID string, pid *backend.PIDWriter, r *execRun) (backend.ExecStatus, error) {
	grace := 2 * time.Second
	if !b.killPID(ctx, containerID, pid) {
		grace = 0
	}
	var st backend.ExecStatus
	select {
	case err := <-r.streamed:
		st, _ = exitStatus(err)
		r.errTrailer.status()
		if code, ok := r.trailer.status(); ok {
			st.ExitCode = code
		}
	case <-r.bothSeen:
		r.out.close()
		r.cancel()
		b.awaitCut(r.streamed, containerID)
		st.ExitCode, _ = r.trailer.status()
	case <-time.After(grace):
		r.out.close()
		r.cancel()
		b.awaitCut(r.streamed, containerID)
		st.ExitCode = -1
	}
	st.Killed = true
	return st, ctx.Err()
}

// streamCutGrace bounds the wait for a stream cut by its context to
// return.
const streamCutGrace = 5 * time.Second

// awaitCut waits, for streamCutGrace at most, for a stream whose context
// was cancelled and whose output was closed to return: client-go's stream
// can outlive its context while a read of its stdin blocks. One that does
// not is left to end with that read (streamed is buffered, and what it
// still writes is dropped), and the call goes on.
func (b *Backend) awaitCut(streamed <-chan error, containerID string) {
	select {
	case <-streamed:
	case <-time.After(streamCutGrace):
		b.log.Warn("an exec's stream did not end when cut; left to end on its own", "pod", containerID)
	}
}

// killPID kills the process tree of an exec whose PID was announced, with
// a context that outlives the cancelled one. It reports whether the kill
// ran.
func (b *Backend) killPID(ctx context.Context, containerID string, pid *backend.PIDWriter) bool {
	select {
	case <-pid.Ready():
	case <-time.After(2 * time.Second):
	}
	p := pid.PID()
	if p <= 1 {
		b.log.Warn("exec cancelled before it announced its pid; cannot kill its tree", "pod", containerID)
		return false
	}
	kctx, cancel := cleanupContext(ctx)
	defer cancel()
	if err := b.KillTree(kctx, containerID, p); err != nil {
		b.log.Warn("kill process tree", "pod", containerID, "pid", p, "err", err)
		return false
	}
	return true
}

// KillTree kills process pid inside the sandbox container and everything
// it started (backend.KillTreeScript, in an exec of its own).
func (b *Backend) KillTree(ctx context.Context, containerID string, pid int) error {
	ex, err := b.executor(containerID, []string{"/bin/sh", "-c", backend.KillTreeScript, "mcp-sandbox-kill", strconv.Itoa(pid)}, false)
	if err != nil {
		return err
	}
	_, err = exitStatus(ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard}))
	return b.wrap("kill process tree in "+containerID, err)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
