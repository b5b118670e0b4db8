package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// usageScript prints "MEMORY LIMIT PIDS CPU_NS" for the container, from
// its cgroup (v2, else v1) or, where none is mounted (gVisor), from the
// sandbox kernel's /proc/meminfo (whose total is the pod's limit) and
// /proc; CPU_NS is -1 where it cannot be read. It runs as the sandbox
// user, reading only what the kernel provides.
const usageScript = `c=/sys/fs/cgroup
if [ -r $c/memory.current ]; then
  l=$(cat $c/memory.max); [ "$l" = max ] && l=0
  u=$(sed -n 's/^usage_usec //p' $c/cpu.stat)
  echo "$(cat $c/memory.current) $l $(cat $c/pids.current) $((u * 1000))"
elif [ -r $c/memory/memory.usage_in_bytes ]; then
  echo "$(cat $c/memory/memory.usage_in_bytes) $(cat $c/memory/memory.limit_in_bytes) $(cat $c/pids/pids.current) $(cat $c/cpuacct/cpuacct.usage 2>/dev/null || echo -1)"
else
  t=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
  f=$(sed -n 's/^MemFree: *\([0-9]*\) kB/\1/p' /proc/meminfo)
  n=0; for d in /proc/[0-9]*; do n=$((n+1)); done
  echo "$(((t - f) * 1024)) $((t * 1024)) $n -1"
fi`

// cpuSample is a container's CPU time at a moment, for the next Usage's
// percentage.
type cpuSample struct {
	ns int64
	at time.Time
}

// Usage is the container's use. Where the cluster serves the metrics API
// (DiscoverMetrics) and it holds a sample of the pod, memory (the working
// set) and CPU (averaged over the sample's window; 100 is one core busy,
// as on Docker) are the cluster's reading, Source "metrics"; else, and
// while a new pod has no sample yet, they are read inside the pod
// (inPodUsage), Source "in-pod": the sandbox's word. Pids are always read
// inside the pod (the metrics API counts none; 0 when the sandbox spoils
// that read while the metrics answered). MemoryLimit is the pod spec's.
// A pod that is gone is an error, even while its last sample lingers.
func (b *Backend) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	if !dnsLabel.MatchString(containerID) {
		return backend.Usage{}, fmt.Errorf("kubernetes: no sandbox pod %q", containerID)
	}
	m, merr := b.metricsOf(ctx, containerID)
	in, inErr := b.inPodUsage(ctx, containerID)
	u, err := combineUsage(m, merr, in, inErr, time.Now())
	if err != nil {
		return backend.Usage{}, err
	}
	if merr == nil && inErr != nil {
		b.log.Debug("kubernetes: pids of a sandbox", "id", containerID, "err", inErr)
	}
	u.MemoryLimit = b.memoryLimit(ctx, containerID, u.MemoryLimit)
	return u, nil
}

// combineUsage is Usage from the metrics API's sample m (or merr) and the
// in-pod read in (or inErr): the sample's memory and CPU with in's pids
// when there is a sample, else in. An in-pod read the sandbox spoilt
// (errUnreadable) leaves the sample with no pids; any other failure of it
// (no pod to exec in, though its last sample may linger; ctx ended) is the
// error.
func combineUsage(m metricsSample, merr error, in backend.Usage, inErr error, now time.Time) (backend.Usage, error) {
	switch {
	case merr != nil && inErr != nil:
		return backend.Usage{}, inErr
	case merr != nil:
		return in, nil
	case inErr != nil && !errors.Is(inErr, errUnreadable):
		return backend.Usage{}, inErr
	}
	u := m.usage(now)
	u.Pids, u.MemoryLimit = in.Pids, in.MemoryLimit
	return u, nil
}

// metricsTimeout bounds one read of the metrics API: an aggregated API
// that hangs must not hold Usage up.
const metricsTimeout = 5 * time.Second

// errUnreadable: the in-pod read answered something else than its numbers
// (the sandbox controls what it reads and prints).
var errUnreadable = errors.New("unreadable answer")

// errNoMetrics: the cluster serves no metrics API this package reads.
var errNoMetrics = errors.New("no metrics API")

// metricsOf is the metrics API's sample of the container's pod, or an
// error when there is none to use (not served, no sample yet, or an
// answer that is refused).
func (b *Backend) metricsOf(ctx context.Context, containerID string) (metricsSample, error) {
	v := b.metricsVersion()
	if v == "" {
		return metricsSample{}, errNoMetrics
	}
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	m, err := b.readPodMetrics(ctx, v, containerID)
	if err != nil {
		b.log.Debug("kubernetes: metrics API: usage read inside the pod", "id", containerID, "err", err)
	}
	return m, err
}

// memoryLimit is the memory limit of the container's pod spec (read once
// per container: a pod's limits do not change), or orElse when it cannot
// be read.
func (b *Backend) memoryLimit(ctx context.Context, containerID string, orElse uint64) uint64 {
	b.mu.Lock()
	l, ok := b.limits[containerID]
	b.mu.Unlock()
	if ok {
		return l
	}
	pod, err := b.cs.pods(b.namespace).Get(ctx, containerID, metav1.GetOptions{})
	if err != nil {
		return orElse
	}
	for _, c := range pod.Spec.Containers {
		if q, has := c.Resources.Limits[corev1.ResourceMemory]; c.Name == ContainerName && has && q.Value() > 0 {
			l = uint64(q.Value())
			b.mu.Lock()
			if b.limits == nil {
				b.limits = map[string]uint64{}
			}
			b.limits[containerID] = l
			b.mu.Unlock()
			return l
		}
	}
	return orElse
}

// inPodUsage samples the container from inside (an exec of usageScript).
// CPUPercent is the use since the previous sample (0 on the first, and
// under gVisor, which has no CPU counter).
func (b *Backend) inPodUsage(ctx context.Context, containerID string) (backend.Usage, error) {
	var out bytes.Buffer
	st, err := b.Exec(ctx, containerID, backend.ExecSpec{
		Cmd: []string{"/bin/sh", "-c", usageScript}, Stdout: &backend.LimitedBuffer{B: &out, N: 256}, Stderr: &backend.LimitedBuffer{B: &bytes.Buffer{}, N: 256},
	})
	if err != nil {
		return backend.Usage{}, err
	}
	f := strings.Fields(out.String())
	var v [4]int64
	for i := range v {
		if st.ExitCode != 0 || len(f) != 4 {
			break
		}
		if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil || v[i] < -1 {
			break
		}
	}
	if st.ExitCode != 0 || len(f) != 4 || err != nil || v[0] < 0 || v[1] < 0 || v[2] < 0 {
		return backend.Usage{}, fmt.Errorf("kubernetes: usage of %s: %w %q (exit %d)", containerID, errUnreadable, out.String(), st.ExitCode)
	}
	now := time.Now()
	u := backend.Usage{MemoryBytes: uint64(v[0]), MemoryLimit: uint64(v[1]), Pids: uint64(v[2]), SampledAt: now, Source: backend.UsageInPod}
	if v[3] >= 0 {
		b.mu.Lock()
		if b.cpu == nil {
			b.cpu = map[string]cpuSample{}
		}
		prev, ok := b.cpu[containerID]
		b.cpu[containerID] = cpuSample{ns: v[3], at: now}
		b.mu.Unlock()
		if dt := now.Sub(prev.at); ok && dt > 0 && v[3] >= prev.ns {
			u.CPUPercent = float64(v[3]-prev.ns) / float64(dt.Nanoseconds()) * 100
		}
	}
	return u, nil
}

// forgetUsage drops a removed container's CPU sample.
func (b *Backend) forgetUsage(containerID string) {
	b.mu.Lock()
	delete(b.cpu, containerID)
	delete(b.limits, containerID)
	delete(b.users, containerID)
	b.mu.Unlock()
}
