package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.AgentStager = (*Backend)(nil)

// The agent staged in a warm pool's pods: each ready, unclaimed pod of a
// pool this backend claims from gets the engine's agent copied into its
// workspace while it waits (it has run no code: no claim has had it), so
// that a claim's agent start is one attach. A watch on the namespace's
// pool pods (warmwatch.go) finds them as they become ready; it lives from
// the first pool ensured until Close.
//
// Servers sharing a pool stage each pod once: a stager first marks the
// pod (AnnotationStagedBy, under the pod's resourceVersion), and skips a
// pod already marked; a mark of a copy under way lapses after twice
// stageTimeout (its server died during the copy), and the loop looks
// again at the pod then, as no change of the pod would come to say so.
// Only a backend's own copies are run, and only in a pod it then
// claimed: a server cannot tell that another's copy is the agent it
// expects (the other may be another version of mcp-sandbox), so a
// foreign copy is removed, by whichever of the two sees the other's
// write on the pod: the claimant when the stager's file is on the pod
// before its claim's patch, else the stager when its file's patch answers
// with the claim on the pod. No sandbox code has run in the pod before its
// claimant's agent starts, so the sandbox user has no part in the file.

// AnnotationStagedBy marks a pool pod whose agent a server stages: the
// server's stager id, a space, then "@" and the Unix time while it
// copies, its file once copied.
const AnnotationStagedBy = "k8s.mcp-sandbox.io/staged-by"

// stageTimeout bounds one pod's copy.
const stageTimeout = 30 * time.Second

// A pod whose copy failed (an exec the API server or the kubelet did not
// carry out, say) is tried again copyRetry later, up to copyTries copies
// in all; a claim of it before then copies the agent itself.
const (
	copyRetry = 30 * time.Second
	copyTries = 3
)

// stager holds the staged files of a backend's pool pods, and the
// lifetime of its background work (the staging loop, foreign copies'
// removals): from the first pool ensured until Close.
type stager struct {
	mu      sync.Mutex
	stage   func(context.Context, backend.StageRequest) (string, error)
	files   map[string]*stagedFile // pod → its file
	id      string                 // this backend in AnnotationStagedBy
	ctx     context.Context        // cancelled by Close
	cancel  context.CancelFunc
	closed  bool
	running bool          // the staging loop runs
	rescan  chan struct{} // a pool was ensured, a mark lapsed, a retry is due: look again at the ready
	// recheck sends on rescan at recheckAt, the earliest lapse of a
	// copy's mark seen or retry of a failed copy due: a pod marked by a
	// server that died during its copy, or left after a failed one,
	// changes no more, so no event of the watch would say so.
	recheck   *time.Timer
	recheckAt time.Time
	wg        sync.WaitGroup
}

// stagedFile is a pod's staged agent: file is set before done closes
// ("" when the copy failed or another server stages the pod).
type stagedFile struct {
	done chan struct{}
	file string
	// failed counts the pod's copies that failed, this one's included once
	// it has; retryAt (zero: none) is when the next may begin. Both under
	// the stager's mu.
	failed  int
	retryAt time.Time
}

// StageAgents implements backend.AgentStager.
func (b *Backend) StageAgents(stage func(context.Context, backend.StageRequest) (string, error)) {
	b.stg.mu.Lock()
	defer b.stg.mu.Unlock()
	b.stg.stage = stage
}

// StagedAgent implements backend.AgentStager: it waits for a copy still
// under way (ctx bounding the wait).
func (b *Backend) StagedAgent(ctx context.Context, containerID string) string {
	b.stg.mu.Lock()
	f := b.stg.files[containerID]
	delete(b.stg.files, containerID)
	b.stg.mu.Unlock()
	if f == nil {
		return ""
	}
	select {
	case <-f.done:
		return f.file
	case <-ctx.Done():
		return ""
	}
}

// Close stops the backend's background work and waits for it: the
// staging of pool pods (and its watch), the removals of foreign agent
// copies, the renewal of leases (as for a server that dies: what is left
// goes when its lease ends).
func (b *Backend) Close() {
	b.stg.mu.Lock()
	b.stg.closed = true
	if b.stg.cancel != nil {
		b.stg.cancel()
	}
	if b.stg.recheck != nil {
		b.stg.recheck.Stop()
	}
	b.stg.mu.Unlock()
	b.stg.wg.Wait()
	b.StopLeases()
}

// spawnLocked runs fn on a goroutine Close cancels and waits for; false
// after Close. s.mu is held.
func (s *stager) spawnLocked(fn func(ctx context.Context)) bool {
	if s.closed {
		return false
	}
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.id = newStagerID()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn(s.ctx)
	}()
	return true
}

// newStagerID names a backend in AnnotationStagedBy.
func newStagerID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// kickStaging starts the staging loop, once the engine gave its copy and
// a pool is ensured; a loop already running looks again at the ready pods
// (those of a pool ensured now).
func (b *Backend) kickStaging() {
	b.stg.mu.Lock()
	defer b.stg.mu.Unlock()
	if b.stg.stage == nil {
		return
	}
	if b.stg.running {
		select {
		case b.stg.rescan <- struct{}{}:
		default:
		}
		return
	}
	b.stg.rescan = make(chan struct{}, 1)
	b.stg.running = b.stg.spawnLocked(b.stageLoop)
}

// lookAgainAt has the staging loop look again at the ready pods at t (a
// mark's lapse, a failed copy's retry), unless it will before.
func (s *stager) lookAgainAt(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookAgainAtLocked(t)
}

// lookAgainAtLocked is lookAgainAt with s.mu held.
func (s *stager) lookAgainAtLocked(t time.Time) {
	if s.closed || s.recheck != nil && !s.recheckAt.After(t) {
		return
	}
	if s.recheck != nil {
		s.recheck.Stop()
	}
	s.recheckAt = t
	s.recheck = time.AfterFunc(time.Until(t), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.recheck = nil
		select {
		case s.rescan <- struct{}{}:
		default:
		}
	})
}

// has reports whether pod's agent is staged (its copy done, and good).
func (s *stager) has(pod string) bool {
	s.mu.Lock()
	f := s.files[pod]
	s.mu.Unlock()
	if f == nil {
		return false
	}
	select {
	case <-f.done:
		return f.file != ""
	default:
		return false
	}
}

// ensuredPools returns the warm pools and the names of the pools this
// backend ensured.
func (b *Backend) ensuredPools() (*WarmPools, []string) {
	b.warmMu.Lock()
	defer b.warmMu.Unlock()
	var names []string
	for lang := range b.warm.templates {
		names = append(names, PoolName(lang))
	}
	return b.warm.pools, names
}

// begin marks pod's staging as under way and returns its file to fill;
// nil when it was already, unless its copy failed and the next is due.
func (s *stager) begin(pod string) *stagedFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.files[pod]
	if old != nil && (old.retryAt.IsZero() || time.Now().Before(old.retryAt)) {
		if !old.retryAt.IsZero() {
			s.lookAgainAtLocked(old.retryAt)
		}
		return nil
	}
	if s.files == nil {
		s.files = map[string]*stagedFile{}
	}
	f := &stagedFile{done: make(chan struct{})}
	if old != nil {
		f.failed = old.failed
	}
	s.files[pod] = f
	return f
}

// failedCopy records that f's copy failed, and has the loop begin the
// next copyRetry later while the pod has had fewer than copyTries.
func (s *stager) failedCopy(f *stagedFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.failed++
	if s.closed || f.failed >= copyTries {
		return
	}
	f.retryAt = time.Now().Add(copyRetry)
	s.lookAgainAtLocked(f.retryAt)
}

// forgetAbsent forgets the files of the pods not in present.
func (s *stager) forgetAbsent(present map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pod := range s.files {
		if !present[pod] {
			delete(s.files, pod)
		}
	}
}

// forget forgets pod's file (its Sandbox is gone).
func (s *stager) forget(pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.files, pod)
}

// stageOne copies the agent into p, as its user, unless another server
// marked it first, and sets f's file; a copy that fails takes its mark off
// (another server may then stage the pod), and is tried again later
// (copyRetry).
func (b *Backend) stageOne(ctx context.Context, p *corev1.Pod, f *stagedFile) {
	done := false
	defer func() {
		if !done {
			close(f.done)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, stageTimeout)
	defer cancel()
	b.stg.mu.Lock()
	stage, id := b.stg.stage, b.stg.id
	b.stg.mu.Unlock()
	pods := b.cs.pods(b.namespace)
	marked := id + " @" + strconv.FormatInt(time.Now().Unix(), 10)
	mark := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, p.ResourceVersion, AnnotationStagedBy, marked)
	if _, err := pods.Patch(ctx, p.Name, types.MergePatchType, mark, metav1.PatchOptions{}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			// No answer (a cut connection, Close): the mark may be on
			// the pod, keeping the others off it for nothing.
			b.unmark(ctx, p.Name, marked)
		}
		b.stg.forget(p.Name) // changed meanwhile: its next event says how
		return
	}
	start := time.Now()
	user := p.Annotations[AnnotationUser]
	file, err := stage(ctx, backend.StageRequest{ContainerID: p.Name, Image: sandboxImage(p), User: user})
	if err != nil {
		b.log.Debug("stage the command agent", "pod", p.Name, "err", err)
		b.unmark(ctx, p.Name, marked)
		b.stg.failedCopy(f)
		return
	}
	b.log.Debug("staged the command agent", "pod", p.Name, "ms", time.Since(start).Milliseconds())
	// Done for a claim of this server's already waiting: the file's name
	// goes on the pod after.
	f.file, done = file, true
	close(f.done)
	// The file's name replaces the copy's mark even when the copy took
	// most of stageTimeout: a mark left saying "copy under way" would keep
	// other servers off the pod for 2*stageTimeout for nothing.
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationStagedBy, id+" "+file)
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer pcancel()
	name := p.Name
	p, err = pods.Patch(pctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		b.log.Warn("record the staged command agent on its pod", "pod", name, "err", err)
		return
	}
	if p.Annotations[AnnotationClaim] != "" && !b.leaseHeld(name) {
		// Another server claimed the pod while the copy was under way,
		// before this file was on it: it is this server's to remove.
		rctx, rcancel := cleanupContext(ctx)
		defer rcancel()
		b.removeCopy(rctx, name, user, file)
	}
}

// markTimeout bounds a patch of the staged-by mark made after the copy's
// own time ran out or the copy ended.
const markTimeout = 5 * time.Second

// unmark takes the staged-by mark off pod if it still says marked (this
// backend's copy under way), even with ctx ended (Close waits for it).
func (b *Backend) unmark(ctx context.Context, pod, marked string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	switch err := b.unmarkPatch(ctx, pod, marked); {
	case err == nil, apierrors.IsNotFound(err):
	case apierrors.IsInvalid(err): // another mark, or none: not this copy's to take off
		b.log.Debug("the staged-by mark is another's; left", "pod", pod)
	default:
		b.log.Warn("take the staged-by mark off a pod", "pod", pod, "err", err)
	}
}

// unmarkPatch removes pod's staged-by mark if it says marked: an
// apierrors.IsInvalid error when it does not.
func (b *Backend) unmarkPatch(ctx context.Context, pod, marked string) error {
	at := "/metadata/annotations/" + strings.ReplaceAll(strings.ReplaceAll(AnnotationStagedBy, "~", "~0"), "/", "~1")
	patch := fmt.Appendf(nil, `[{"op":"test","path":%q,"value":%q},{"op":"remove","path":%q}]`, at, marked, at)
	_, err := b.cs.pods(b.namespace).Patch(ctx, pod, types.JSONPatchType, patch, metav1.PatchOptions{})
	return err
}

// stagedElsewhere reports whether p carries a server's staged-by mark that
// holds at now: its file, or a copy under way for less than twice
// stageTimeout (older, its server died during the copy); lapses is when
// a copy's mark stops holding (zero for a file's).
func stagedElsewhere(p *corev1.Pod, now time.Time) (held bool, lapses time.Time) {
	v, ok := p.Annotations[AnnotationStagedBy]
	if !ok {
		return false, time.Time{}
	}
	_, rest, _ := strings.Cut(v, " ")
	at, copying := strings.CutPrefix(rest, "@")
	if !copying {
		return true, time.Time{}
	}
	sec, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return false, time.Time{}
	}
	lapses = time.Unix(sec, 0).Add(2 * stageTimeout)
	return now.Before(lapses), lapses
}

// dropForeignCopy removes, in the background, the agent another server
// staged in a pod this backend claimed (p: the pod as its claim's patch
// left it).
func (b *Backend) dropForeignCopy(p *corev1.Pod) {
	by, file, ok := strings.Cut(p.Annotations[AnnotationStagedBy], " ")
	b.stg.mu.Lock()
	defer b.stg.mu.Unlock()
	if !ok || by == b.stg.id || strings.HasPrefix(file, "@") {
		return
	}
	pod, user := p.Name, p.Annotations[AnnotationUser]
	b.stg.spawnLocked(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, stageTimeout)
		defer cancel()
		b.removeCopy(ctx, pod, user, file)
	})
}

// removeCopy removes a staged agent's file from pod, as its user: only a
// file of the agent's in the workspace.
func (b *Backend) removeCopy(ctx context.Context, pod, user, file string) {
	if path.Dir(file) != backend.Workspace || !strings.HasPrefix(path.Base(file), agentFilePrefix) {
		b.log.Warn("a pool pod's staged agent is no agent file; left", "pod", pod, "file", file)
		return
	}
	st, err := b.Exec(ctx, pod, backend.ExecSpec{Cmd: []string{"rm", "-f", "--", file}, User: user})
	if err != nil || st.ExitCode != 0 {
		b.log.Debug("remove an unused staged agent", "pod", pod, "file", file, "err", err, "exit", st.ExitCode)
	}
}

// agentFilePrefix is the name of an agent's file in the workspace
// (package agent's FilePrefix; that package is no import of this one, and
// a test holds the two together).
const agentFilePrefix = ".mcp-sandbox-agent-"

// sandboxImage is the image of pod's sandbox container.
func sandboxImage(p *corev1.Pod) string { return p.Spec.Containers[0].Image }
