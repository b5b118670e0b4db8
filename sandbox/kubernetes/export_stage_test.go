package kubernetes

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// StagerID is the backend's id in AnnotationStagedBy ("" before its
// staging started).
func (b *Backend) StagerID() string {
	b.stg.mu.Lock()
	defer b.stg.mu.Unlock()
	return b.stg.id
}

// UnmarkPatch is unmarkPatch: the mark taken off pod only if it says
// marked.
func (b *Backend) UnmarkPatch(ctx context.Context, pod, marked string) error {
	return b.unmarkPatch(ctx, pod, marked)
}

// Requests counts a backend's requests to the API server (execs and
// attaches aside: they go through their own connections), by verb and
// resource ("list sandboxes", "watch sandboxes", "get pods", …).
type Requests struct {
	mu sync.Mutex
	n  map[string]int
}

// CountRequests has the backend's later requests counted (call it before
// its first: the warm pools keep the client they were made with).
func (b *Backend) CountRequests(t *testing.T) *Requests {
	t.Helper()
	r := &Requests{n: map[string]int{}}
	rc := rest.CopyConfig(b.rest)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{rt, r} })
	cs, err := newClients(rc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	b.cs, b.dyn = cs, dyn
	return r
}

// Counts returns the counts so far.
func (r *Requests) Counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.n))
	for k, v := range r.n {
		out[k] = v
	}
	return out
}

// Total is the number of requests so far.
func (r *Requests) Total() int {
	n := 0
	for _, v := range r.Counts() {
		n += v
	}
	return n
}

type counting struct {
	rt http.RoundTripper
	r  *Requests
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.r.mu.Lock()
	c.r.n[requestKind(req)]++
	c.r.mu.Unlock()
	return c.rt.RoundTrip(req)
}

// requestKind is a request's verb and resource: "list sandboxes".
func requestKind(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	res, named := "", false
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			res, named = parts[i+2], i+3 < len(parts)
		}
	}
	verb := strings.ToLower(req.Method)
	switch {
	case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
		verb = "watch"
	case verb == "get" && !named:
		verb = "list"
	}
	return verb + " " + res
}
