package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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

// Usage samples the container from inside (an exec of usageScript): the
// metrics API is not read. CPUPercent is the use since the previous
// sample (0 on the first, and under gVisor, which has no CPU counter).
func (b *Backend) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	var out bytes.Buffer
	st, err := b.Exec(ctx, containerID, backend.ExecSpec{
		Cmd: []string{"/bin/sh", "-c", usageScript}, Stdout: &limited{&out, 256}, Stderr: &limited{&bytes.Buffer{}, 256},
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
		return backend.Usage{}, fmt.Errorf("kubernetes: usage of %s: unreadable answer %q (exit %d)", containerID, out.String(), st.ExitCode)
	}
	now := time.Now()
	u := backend.Usage{MemoryBytes: uint64(v[0]), MemoryLimit: uint64(v[1]), Pids: uint64(v[2]), SampledAt: now}
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
	b.mu.Unlock()
}
