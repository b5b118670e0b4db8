package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// MetricsGroup is the API group of the resource metrics API (PodMetrics),
// served by metrics-server from the kubelets' readings.
const MetricsGroup = "metrics.k8s.io"

// metricsVersions are the versions of MetricsGroup this package reads,
// best first.
var metricsVersions = []string{"v1beta1"}

// metricsRecheck is how long an answer of discovery about the metrics API
// stands: metrics-server may be installed or removed while a server runs.
const metricsRecheck = 5 * time.Minute

// maxMetricsBody bounds what is read of one PodMetrics answer (one pod of
// one container is under 1 KiB): a larger answer is refused unread.
const maxMetricsBody = 64 << 10

// errNoSample is a PodMetrics answer of 404: the metrics API is served but
// holds no sample of the pod yet (metrics-server's first one comes a
// scrape interval or two after the pod starts).
var errNoSample = errors.New("no metrics sample yet")

// metricsState is the cached answer of discovery about the metrics API.
type metricsState struct {
	version string // the version served that this package reads; "" when none
	checked time.Time
}

// DiscoverMetrics returns the version of the metrics API the cluster serves
// that this package reads, or "" when it serves none of them.
func DiscoverMetrics(d discoverer) (string, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return "", fmt.Errorf("kubernetes: discover API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != MetricsGroup {
			continue
		}
		for _, v := range metricsVersions {
			if slices.ContainsFunc(g.Versions, func(gv metav1.GroupVersionForDiscovery) bool { return gv.Version == v }) {
				return v, nil
			}
		}
	}
	return "", nil
}

// metricsVersion is the metrics API version Usage reads ("" for none),
// from discovery at most once per metricsRecheck. A failed discovery
// counts as none until the next check.
func (b *Backend) metricsVersion() string {
	b.metricsMu.Lock()
	defer b.metricsMu.Unlock()
	if b.cs.metricsHTTP == nil {
		return ""
	}
	if !b.metrics.checked.IsZero() && time.Since(b.metrics.checked) < metricsRecheck {
		return b.metrics.version
	}
	v, err := DiscoverMetrics(b.cs.disc)
	if err != nil {
		b.log.Debug("kubernetes: metrics API discovery", "err", err)
	}
	b.metrics = metricsState{version: v, checked: time.Now()}
	return v
}

// podMetrics is what Usage reads of a PodMetrics object.
type podMetrics struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Timestamp  time.Time `json:"timestamp"`
	Containers []struct {
		Name  string                       `json:"name"`
		Usage map[string]resource.Quantity `json:"usage"`
	} `json:"containers"`
}

// metricsSample is the sandbox container's use by the metrics API.
type metricsSample struct {
	nanoCores   int64 // CPU, averaged over the sample's window
	memoryBytes int64 // the working set: usage without the page cache
	at          time.Time
}

// readPodMetrics GETs the PodMetrics of pod in version v of the metrics
// API, reading at most maxMetricsBody bytes of the answer. A 404 is
// errNoSample; an answer without the sandbox container, or with values
// that are not quantities, is an error.
func (b *Backend) readPodMetrics(ctx context.Context, v, pod string) (metricsSample, error) {
	u := b.cs.coreREST.Get().AbsPath("/apis", MetricsGroup, v, "namespaces", b.namespace, "pods", pod).URL()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return metricsSample{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := b.cs.metricsHTTP.Do(req)
	if err != nil {
		return metricsSample{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBody+1))
	switch {
	case err != nil:
		return metricsSample{}, err
	case len(body) > maxMetricsBody:
		return metricsSample{}, fmt.Errorf("PodMetrics answer over %d bytes", maxMetricsBody)
	case resp.StatusCode == http.StatusNotFound:
		return metricsSample{}, errNoSample
	case resp.StatusCode != http.StatusOK:
		return metricsSample{}, fmt.Errorf("PodMetrics: HTTP %d", resp.StatusCode)
	}
	return parsePodMetrics(body, b.namespace, pod)
}

// parsePodMetrics reads the sandbox container's sample from a PodMetrics
// answer for pod in namespace ns.
func parsePodMetrics(body []byte, ns, pod string) (metricsSample, error) {
	var m podMetrics
	if err := json.Unmarshal(body, &m); err != nil {
		return metricsSample{}, fmt.Errorf("PodMetrics: %w", err)
	}
	if m.Metadata.Name != pod || m.Metadata.Namespace != ns {
		return metricsSample{}, fmt.Errorf("PodMetrics of %s/%s answered for %s/%s", ns, pod, m.Metadata.Namespace, m.Metadata.Name)
	}
	for _, c := range m.Containers {
		if c.Name != ContainerName {
			continue
		}
		cpu, okCPU := c.Usage["cpu"]
		mem, okMem := c.Usage["memory"]
		s := metricsSample{nanoCores: cpu.ScaledValue(resource.Nano), memoryBytes: mem.Value(), at: m.Timestamp}
		if !okCPU || !okMem || s.nanoCores < 0 || s.memoryBytes < 0 {
			return metricsSample{}, fmt.Errorf("PodMetrics of %s/%s: container %s has no cpu and memory", ns, pod, ContainerName)
		}
		return s, nil
	}
	// metrics-server leaves out a container it has no reading of yet.
	return metricsSample{}, errNoSample
}

// usage is the sample as a Usage (memory and CPU; 100 percent is one core
// busy, as Docker's), taken at its timestamp, or at now when it has none
// or one in the future.
func (m metricsSample) usage(now time.Time) backend.Usage {
	u := backend.Usage{
		MemoryBytes: uint64(m.memoryBytes), CPUPercent: float64(m.nanoCores) / 1e7,
		SampledAt: m.at, Source: backend.UsageMetrics,
	}
	if u.SampledAt.IsZero() || u.SampledAt.After(now) {
		u.SampledAt = now
	}
	return u
}
