package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// groupsJSON is an /apis answer serving agent-sandbox and, in version v,
// the metrics API ("" for none).
func groupsJSON(v string) string {
	metrics := ""
	if v != "" {
		metrics = fmt.Sprintf(`,{"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/%s","version":"%s"}]}`, v, v)
	}
	return `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"agents.x-k8s.io","versions":[{"groupVersion":"agents.x-k8s.io/v1beta1","version":"v1beta1"}]}` + metrics + `]}`
}

// podMetricsJSON is metrics-server's answer for pod sb-1 in namespace ns.
func podMetricsJSON(container, cpu, memory string) string {
	return `{"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1",
"metadata":{"name":"sb-1","namespace":"ns","creationTimestamp":"2026-11-26T04:00:05Z"},
"timestamp":"2026-11-26T04:00:00Z","window":"10.5s",
"containers":[{"name":"` + container + `","usage":{"cpu":"` + cpu + `","memory":"` + memory + `"}}]}`
}

// endless, as metricsServer's body, is an answer that never ends.
const endless = "(endless)"

// metricsServer is an API server answering /apis with apis and the
// PodMetrics of ns/sb-1 with status and body, and pod ns/sb-1; it counts
// the /apis asks (and a hundred per pod GET).
func metricsServer(t *testing.T, apis string, status int, body string) (*Backend, *atomic.Int32) {
	t.Helper()
	var discoveries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/apis":
			discoveries.Add(1)
			fmt.Fprint(w, apis)
		case "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/sb-1":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if body != endless {
				fmt.Fprint(w, body)
				return
			}
			// Until the client hangs up: only a bounded read ends.
			fmt.Fprint(w, `{"kind":"PodMetrics","pad":"`)
			chunk := []byte(strings.Repeat("x", 32<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/api/v1/namespaces/ns/pods/sb-1":
			discoveries.Add(100) // counted apart from discovery
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"sb-1","namespace":"ns"},
"spec":{"containers":[{"name":"helper","resources":{"limits":{"memory":"1Gi"}}},{"name":"sandbox","resources":{"limits":{"memory":"256Mi"}}}]}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	rc := &rest.Config{Host: srv.URL}
	cs, err := newClients(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &Backend{rest: rc, cs: cs, log: slog.New(slog.DiscardHandler), namespace: "ns"}, &discoveries
}

// The metrics API is found by discovery, in a version this package reads.
func TestDiscoverMetrics(t *testing.T) {
	for _, tc := range []struct {
		name, apis, want string
		err              bool
	}{
		{"served", groupsJSON("v1beta1"), "v1beta1", false},
		{"not served", groupsJSON(""), "", false},
		{"only an unknown version", groupsJSON("v2"), "", false},
		{"garbage", "{", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := metricsServer(t, tc.apis, 200, "")
			got, err := DiscoverMetrics(b.cs.disc)
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("DiscoverMetrics = %q, %v; want %q (error: %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

// What the metrics API answers for a pod, read with a bound: a sample is
// used; no sample yet (404, or no sandbox container), an error, garbage,
// an answer for another pod and an oversized answer are not.
func TestReadPodMetrics(t *testing.T) {
	huge := `{"kind":"PodMetrics","pad":"` + strings.Repeat("x", 8<<20) + `"}`
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		nanoCores int64
		memory    int64
		err       string // part of the error; errNoSample: "no metrics sample"
	}{
		{"sample", 200, podMetricsJSON("sandbox", "250m", "64Mi"), 250_000_000, 64 << 20, ""},
		{"nanocores", 200, podMetricsJSON("sandbox", "1234567n", "1000Ki"), 1234567, 1000 << 10, ""},
		{"no sample yet", 404, `{"kind":"Status","reason":"NotFound"}`, 0, 0, "no metrics sample"},
		{"no sandbox container yet", 200, podMetricsJSON("other", "1m", "1Mi"), 0, 0, "no metrics sample"},
		{"unavailable", 503, "service unavailable", 0, 0, "HTTP 503"},
		{"garbage", 200, "{{{", 0, 0, "PodMetrics"},
		{"not a quantity", 200, podMetricsJSON("sandbox", "lots", "1Mi"), 0, 0, "PodMetrics"},
		{"negative", 200, podMetricsJSON("sandbox", "-5m", "1Mi"), 0, 0, "has no cpu and memory"},
		{"another pod", 200, strings.Replace(podMetricsJSON("sandbox", "1m", "1Mi"), `"sb-1"`, `"sb-2"`, 1), 0, 0, "answered for ns/sb-2"},
		{"huge", 200, huge, 0, 0, "over 65536 bytes"},
		{"huge error", 500, huge, 0, 0, "over 65536 bytes"},
		{"endless", 200, endless, 0, 0, "over 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := metricsServer(t, groupsJSON("v1beta1"), tc.status, tc.body)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			m, err := b.readPodMetrics(ctx, "v1beta1", "sb-1")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("readPodMetrics = %+v, %v; want an error with %q", m, err, tc.err)
				}
				if tc.err == "no metrics sample" && !errors.Is(err, errNoSample) {
					t.Errorf("%v is not errNoSample", err)
				}
				return
			}
			want := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
			if err != nil || m.nanoCores != tc.nanoCores || m.memoryBytes != tc.memory || !m.at.Equal(want) {
				t.Errorf("readPodMetrics = %+v, %v; want %d nanocores, %d bytes at %v", m, err, tc.nanoCores, tc.memory, want)
			}
		})
	}
}

// metricsOf reads the pod's sample when the metrics API is served, and
// asks discovery once per metricsRecheck, not per sample.
func TestMetricsOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		apis    string
		status  int
		wantErr error // nil: a sample
	}{
		{"served", groupsJSON("v1beta1"), 200, nil},
		{"not served", groupsJSON(""), 200, errNoMetrics},
		{"no sample yet", groupsJSON("v1beta1"), 404, errNoSample},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, discoveries := metricsServer(t, tc.apis, tc.status, podMetricsJSON("sandbox", "500m", "32Mi"))
			for range 3 {
				m, err := b.metricsOf(context.Background(), "sb-1")
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("metricsOf = %+v, %v; want %v", m, err, tc.wantErr)
					}
					continue
				}
				if err != nil || m.memoryBytes != 32<<20 || m.nanoCores != 500_000_000 {
					t.Fatalf("metricsOf = %+v, %v; want 500m and 32Mi", m, err)
				}
			}
			if n := discoveries.Load(); n != 1 {
				t.Errorf("discovery asked %d times for 3 samples, want once", n)
			}
			b.metricsMu.Lock()
			b.metrics.checked = time.Now().Add(-metricsRecheck - time.Second)
			b.metricsMu.Unlock()
			_, _ = b.metricsOf(context.Background(), "sb-1")
			if n := discoveries.Load(); n != 2 {
				t.Errorf("discovery asked %d times after %v, want again", n, metricsRecheck)
			}
		})
	}
}

// A backend without a metrics client (a fake clientset's) never asks.
func TestMetricsWithoutClient(t *testing.T) {
	b, discoveries := metricsServer(t, groupsJSON("v1beta1"), 200, podMetricsJSON("sandbox", "1", "1Mi"))
	b.cs.metricsHTTP = nil
	if _, err := b.metricsOf(context.Background(), "sb-1"); !errors.Is(err, errNoMetrics) || discoveries.Load() != 0 {
		t.Errorf("metricsOf without a client = %v after %d discoveries; want errNoMetrics, none", err, discoveries.Load())
	}
}

// A sample's usage: CPU in percent of one core (as Docker's), the working
// set, the sample's time unless it is missing or in the future.
func TestMetricsSampleUsage(t *testing.T) {
	now := time.Date(2026, 11, 26, 4, 0, 30, 0, time.UTC)
	past := now.Add(-20 * time.Second)
	for _, tc := range []struct {
		name string
		m    metricsSample
		want backend.Usage
	}{
		{"a quarter core", metricsSample{250_000_000, 64 << 20, past},
			backend.Usage{CPUPercent: 25, MemoryBytes: 64 << 20, SampledAt: past, Source: backend.UsageMetrics}},
		{"two cores", metricsSample{2_000_000_000, 1, past},
			backend.Usage{CPUPercent: 200, MemoryBytes: 1, SampledAt: past, Source: backend.UsageMetrics}},
		{"no time", metricsSample{0, 0, time.Time{}},
			backend.Usage{SampledAt: now, Source: backend.UsageMetrics}},
		{"future", metricsSample{0, 0, now.Add(time.Hour)},
			backend.Usage{SampledAt: now, Source: backend.UsageMetrics}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.usage(now); got != tc.want {
				t.Errorf("usage = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The memory limit is the pod spec's sandbox container's, read once; a
// pod that cannot be read leaves the in-pod reading.
func TestMemoryLimit(t *testing.T) {
	b, gets := metricsServer(t, groupsJSON(""), 200, "")
	for range 2 {
		if l := b.memoryLimit(context.Background(), "sb-1", 7); l != 256<<20 {
			t.Fatalf("memoryLimit = %d, want 256 MiB", l)
		}
	}
	if n := gets.Load(); n != 100 {
		t.Errorf("%d reads of the pod (in hundreds) for 2 limits, want 1", n)
	}
	if l := b.memoryLimit(context.Background(), "sb-2", 7); l != 7 {
		t.Errorf("memoryLimit of a pod that is not there = %d, want the in-pod 7", l)
	}
	b.forgetUsage("sb-1")
	_ = b.memoryLimit(context.Background(), "sb-1", 7)
	if gets.Load() != 200 {
		t.Error("a removed container's limit stayed cached")
	}
}

// Usage's two readings combined: the sample's memory and CPU with the
// in-pod pids; the in-pod read alone without a sample; a spoilt in-pod
// read leaves the sample standing, a failed one (no pod) is the error.
func TestCombineUsage(t *testing.T) {
	now := time.Date(2026, 11, 26, 4, 0, 30, 0, time.UTC)
	at := now.Add(-10 * time.Second)
	m := metricsSample{nanoCores: 500_000_000, memoryBytes: 64 << 20, at: at}
	in := backend.Usage{MemoryBytes: 1, MemoryLimit: 256 << 20, CPUPercent: 99, Pids: 7, SampledAt: now, Source: backend.UsageInPod}
	spoilt := fmt.Errorf("usage of x: %w %q (exit 0)", errUnreadable, "lies")
	gone := errors.New(`pods "x" not found`)
	fromMetrics := backend.Usage{MemoryBytes: 64 << 20, MemoryLimit: 256 << 20, CPUPercent: 50, Pids: 7, SampledAt: at, Source: backend.UsageMetrics}
	for _, tc := range []struct {
		name        string
		merr, inErr error
		want        backend.Usage
		wantErr     error
	}{
		{"both", nil, nil, fromMetrics, nil},
		{"no sample yet", errNoSample, nil, in, nil},
		{"no metrics API", errNoMetrics, nil, in, nil},
		{"spoilt in-pod read", nil, spoilt, backend.Usage{MemoryBytes: 64 << 20, CPUPercent: 50, SampledAt: at, Source: backend.UsageMetrics}, nil},
		{"pod gone, sample lingers", nil, gone, backend.Usage{}, gone},
		{"pod gone, no sample", errNoSample, gone, backend.Usage{}, gone},
		{"spoilt, no sample", errNoMetrics, spoilt, backend.Usage{}, spoilt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := in
			if tc.inErr != nil {
				in = backend.Usage{}
			}
			got, err := combineUsage(m, tc.merr, in, tc.inErr, now)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("combineUsage = %+v, %v; want %+v, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
