package kubernetes

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.AgentStager = (*Backend)(nil)

// The agent staged in a warm pool's pods: each ready, unclaimed pod of a
// pool this backend claims from gets the engine's agent copied into its
// workspace while it waits (it has run no code: no claim has had it), so
// that a claim's agent start is one attach. Only this backend's own
// copies are run, and only in a pod this backend then claimed; a pod
// another server claims keeps an unused file in its workspace.

// stageFor is how long after the last claim (or pool ensured) the
// backend keeps staging the pool's new ready pods.
const stageFor = 2 * time.Minute

// stageEvery is how often it looks for them meanwhile.
const stageEvery = time.Second

// stageTimeout bounds one pod's copy.
const stageTimeout = 30 * time.Second

// stager holds the staged files of a backend's pool pods.
type stager struct {
	mu      sync.Mutex
	stage   func(context.Context, backend.StageRequest) (string, error)
	files   map[string]*stagedFile // pod → its file
	until   time.Time              // staging goes on until then
	running bool                   // the staging loop runs
}

// stagedFile is a pod's staged agent: file is set before done closes
// ("" when the copy failed).
type stagedFile struct {
	done chan struct{}
	file string
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

// kickStaging has the pools' ready pods staged for stageFor from now.
func (b *Backend) kickStaging() {
	b.stg.mu.Lock()
	defer b.stg.mu.Unlock()
	if b.stg.stage == nil {
		return
	}
	b.stg.until = time.Now().Add(stageFor)
	if !b.stg.running {
		b.stg.running = true
		go b.stageLoop() // ends stageFor after the last kick
	}
}

// stageLoop stages the pools' ready pods until stageFor passed without
// a kick.
func (b *Backend) stageLoop() {
	for {
		b.stageReady(context.Background())
		time.Sleep(stageEvery)
		b.stg.mu.Lock()
		if time.Now().After(b.stg.until) {
			b.stg.running = false
			b.stg.mu.Unlock()
			return
		}
		b.stg.mu.Unlock()
	}
}

// stageReady copies the agent into each ready, unreserved, unclaimed pod
// of the pools this backend ensured that has none yet, one at a time, and
// forgets the files of pods whose Sandbox is gone.
func (b *Backend) stageReady(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, stageTimeout)
	defer cancel()
	w, pools := b.ensuredPools()
	if w == nil || len(pools) == 0 {
		return
	}
	list, err := w.dyn.Resource(w.sandboxes).Namespace(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	present := map[string]bool{}
	todo := map[string]*stagedFile{}
	for i := range list.Items {
		u := &list.Items[i]
		pod := w.claimedFrom(u, u).Pod
		present[pod] = true
		for _, pool := range pools {
			if !readyInPool(u, pool) || reserved(u, time.Now()) {
				continue
			}
			if f := b.stg.begin(pod); f != nil {
				todo[pod] = f
			}
		}
	}
	b.stg.forgetAbsent(present)
	for pod, f := range todo {
		b.stageOne(ctx, pod, f)
	}
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
// nil when it was already.
func (s *stager) begin(pod string) *stagedFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[pod]; ok {
		return nil
	}
	if s.files == nil {
		s.files = map[string]*stagedFile{}
	}
	f := &stagedFile{done: make(chan struct{})}
	s.files[pod] = f
	return f
}

func (s *stager) forgetAbsent(present map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pod := range s.files {
		if !present[pod] {
			delete(s.files, pod)
		}
	}
}

// stageOne copies the agent into pod, as the pod's user, if it runs, and
// sets f's file.
func (b *Backend) stageOne(ctx context.Context, pod string, f *stagedFile) {
	defer close(f.done)
	b.stg.mu.Lock()
	stage := b.stg.stage
	b.stg.mu.Unlock()
	p, err := b.cs.pods(b.namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil || !running(p) || len(p.Spec.Containers) == 0 {
		return
	}
	file, err := stage(ctx, backend.StageRequest{ContainerID: pod, Image: sandboxImage(p), User: p.Annotations[AnnotationUser]})
	if err != nil {
		b.log.Debug("stage the command agent", "pod", pod, "err", err)
		return
	}
	f.file = file
}

// sandboxImage is the image of pod's sandbox container.
func sandboxImage(p *corev1.Pod) string { return p.Spec.Containers[0].Image }
