package kubernetes

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config is the [kubernetes] table of the configuration: where and how the
// backend makes its sandboxes.
type Config struct {
	// Kubeconfig is the kubeconfig file; empty: $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	// Context is the kubeconfig context; empty: the current one.
	Context string
	// Namespace holds the sandboxes; empty: the context's, else "default".
	Namespace string
	// RuntimeClass is each pod's runtimeClassName (e.g. "gvisor"); empty:
	// the cluster's default.
	RuntimeClass string
	// UseAgentSandbox is "auto" (agent-sandbox when its CRDs are served),
	// "always" (an error without it) or "never" (plain pods).
	UseAgentSandbox string
	// WarmPool is the number of pre-warmed sandboxes per language.
	WarmPool map[string]int
	// WarmPoolMax is what a language's warm pool may grow to under
	// demand (claims that find none ready), and WarmPoolIdle how long
	// without a claim takes it back to its WarmPool size (warmgrow.go).
	WarmPoolMax  int
	WarmPoolIdle time.Duration
	// Lease is how far ahead the backend keeps a live agent-sandbox
	// sandbox's shutdownTime; 0: DefaultLease.
	Lease time.Duration
	// CPURequest is each sandbox pod's CPU request, a quantity ("50m"),
	// capped at its CPU limit; empty: a tenth of that limit.
	CPURequest string
}

// Backend runs sandboxes as pods of a Kubernetes cluster.
type Backend struct {
	cfg       Config
	rest      *rest.Config
	cs        *clients
	dyn       dynamic.Interface
	log       *slog.Logger
	cluster   string // the kubeconfig context's cluster name, for display
	namespace string
	leases    leases

	discoverOnce sync.Once
	sandboxGVR   schema.GroupVersionResource // agent-sandbox's Sandbox, when served
	discoverErr  error

	warmMu sync.Mutex
	warm   warmState
	stg    stager // the agent staged in pool pods (warmstage.go)

	mu     sync.Mutex
	policy map[string]corev1.PullPolicy // image → pull policy, from EnsureImage
	cpu    map[string]cpuSample         // container → its last CPU time, from Usage
	limits map[string]uint64            // container → its memory limit, from its pod spec
	users  map[string]string            // container → its pod's user (checkUser)
	arch   archAnswer                   // EngineArch's answer, once it is final

	metricsMu sync.Mutex
	metrics   metricsState // what discovery last said of the metrics API
}

// clientQPS and clientBurst bound the backend's request rate (kubectl's).
const (
	clientQPS   = 50
	clientBurst = 300
)

// connectTimeout bounds New's first request to the cluster.
const connectTimeout = 10 * time.Second

// New connects to the cluster cfg names and checks that it answers. A
// context that does not exist or a cluster that does not answer is an
// error naming it: never a fallback to another engine.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Backend, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context})
	name := cfg.Context
	if name == "" {
		name = "(current context)"
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: context %s: %w", name, err)
	}
	rc.Timeout = 0
	// kubectl's rate, not client-go's 5 a second: a claim's requests do
	// not queue behind a removal's polls and the staging of pool pods
	// (the API server's priority and fairness guards it).
	rc.QPS, rc.Burst = clientQPS, clientBurst
	ns := cfg.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	cluster := name
	if raw, err := cc.RawConfig(); err == nil {
		c := cfg.Context
		if c == "" {
			c = raw.CurrentContext
		}
		if kc, ok := raw.Contexts[c]; ok && kc.Cluster != "" {
			cluster = kc.Cluster
		}
	}
	cs, err := newClients(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: context %s: %w", name, err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: context %s: %w", name, err)
	}
	if err := ping(ctx, cs); err != nil {
		return nil, fmt.Errorf("kubernetes: context %s (%s) does not answer: %w", name, rc.Host, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	quietKlog(log)
	return &Backend{cfg: cfg, rest: rc, cs: cs, dyn: dyn, log: log, cluster: cluster, namespace: ns}, nil
}

// ping asks the API server its version, within connectTimeout.
func ping(ctx context.Context, cs *clients) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	_, err := cs.coreREST.Get().AbsPath("/version").Do(ctx).Raw()
	return err
}

// Cluster is the name of the cluster the backend works on (the kubeconfig
// context's cluster), for ps, the tray and the window.
func (b *Backend) Cluster() string { return b.cluster }

// Namespace is the namespace that holds the backend's sandboxes.
func (b *Backend) Namespace() string { return b.namespace }
