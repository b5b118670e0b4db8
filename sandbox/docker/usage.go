package docker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// cpuSample is one reading of a container's CPU counters.
type cpuSample struct {
	total  uint64 // container CPU time, ns
	system uint64 // host CPU time, ns
	cpus   uint32
	at     time.Time
}

// Usage samples memory, CPU and pids with a one-shot stats call (fast: it
// does not wait for a second sample). CPU percent is computed against the
// previous sample this backend took of the same container; the first call
// takes two samples a short moment apart.
func (b *Backend) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	st, err := b.stats(ctx, containerID)
	if err != nil {
		return backend.Usage{}, err
	}
	cur := cpuSample{total: st.CPUStats.CPUUsage.TotalUsage, system: st.CPUStats.SystemUsage, cpus: st.CPUStats.OnlineCPUs, at: time.Now()}
	b.mu.Lock()
	prev, ok := b.samples[containerID]
	b.mu.Unlock()
	if !ok || time.Since(prev.at) > time.Minute {
		select {
		case <-ctx.Done():
			return backend.Usage{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		prev = cur
		if st, err = b.stats(ctx, containerID); err != nil {
			return backend.Usage{}, err
		}
		cur = cpuSample{total: st.CPUStats.CPUUsage.TotalUsage, system: st.CPUStats.SystemUsage, cpus: st.CPUStats.OnlineCPUs, at: time.Now()}
	}
	b.mu.Lock()
	b.samples[containerID] = cur
	b.mu.Unlock()

	u := backend.Usage{
		MemoryBytes: memoryUsed(st),
		MemoryLimit: st.MemoryStats.Limit,
		Pids:        st.PidsStats.Current,
		CPUPercent:  cpuPercent(prev, cur),
	}
	return u, nil
}

func (b *Backend) stats(ctx context.Context, containerID string) (container.StatsResponse, error) {
	var st container.StatsResponse
	r, err := b.cli.ContainerStatsOneShot(ctx, containerID)
	if err != nil {
		return st, b.wrap("read container stats", err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		return st, b.wrap("decode container stats", err)
	}
	return st, nil
}

// memoryUsed is what `docker stats` shows: usage minus the page cache.
func memoryUsed(st container.StatsResponse) uint64 {
	used := st.MemoryStats.Usage
	for _, k := range []string{"total_inactive_file", "inactive_file"} {
		if v, ok := st.MemoryStats.Stats[k]; ok && v < used {
			return used - v
		}
	}
	return used
}

// cpuPercent is the container's share of one CPU (100 = one core busy),
// between two samples.
func cpuPercent(prev, cur cpuSample) float64 {
	if cur.total < prev.total || cur.system <= prev.system {
		// Engines without a system counter (some VMs): use wall time.
		wall := cur.at.Sub(prev.at)
		if wall <= 0 || cur.total < prev.total {
			return 0
		}
		return float64(cur.total-prev.total) / float64(wall.Nanoseconds()) * 100
	}
	cpus := float64(cur.cpus)
	if cpus == 0 {
		cpus = 1
	}
	return float64(cur.total-prev.total) / float64(cur.system-prev.system) * cpus * 100
}
