package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
)

// The backend's own scheme holds only the API groups it uses. client-go's
// typed clients and its discovery client register every group of
// Kubernetes (k8s.io/client-go/kubernetes/scheme), which linked about
// 14 MB more into mcp-sandbox, for every user, Docker or not.
var (
	apiScheme      = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(apiScheme)
	parameterCodec = runtime.NewParameterCodec(apiScheme)
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, networkingv1.AddToScheme, nodev1.AddToScheme, authorizationv1.AddToScheme,
	} {
		if err := add(apiScheme); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(apiScheme, schema.GroupVersion{Version: "v1"})
}

// typed is what the backend asks of a resource's client: gentype's, or a
// fake clientset's in unit tests.
type typed[T, L runtime.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// reviewer creates SelfSubjectAccessReviews.
type reviewer interface {
	Create(ctx context.Context, r *authorizationv1.SelfSubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SelfSubjectAccessReview, error)
}

// discoverer lists the API groups the server serves.
type discoverer interface {
	ServerGroups() (*metav1.APIGroupList, error)
}

// clients are the backend's clients of the API server.
type clients struct {
	disc           discoverer
	coreREST       rest.Interface // for /version and the pods exec and attach subresources
	pods           func(ns string) typed[*corev1.Pod, *corev1.PodList]
	events         func(ns string) typed[*corev1.Event, *corev1.EventList]
	nodes          typed[*corev1.Node, *corev1.NodeList]
	policies       func(ns string) typed[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList]
	runtimeClasses typed[*nodev1.RuntimeClass, *nodev1.RuntimeClassList]
	reviews        reviewer
	// metricsHTTP reads the metrics API with a bound on the answer
	// (the REST client reads a body whole); nil: Usage does not ask it.
	metricsHTTP *http.Client
}

// groupClient is a REST client for one API group version.
func groupClient(rc *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(rc)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}

// newClients makes the backend's clients for rc.
func newClients(rc *rest.Config) (*clients, error) {
	rcs := map[string]*rest.RESTClient{}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, networkingv1.SchemeGroupVersion, nodev1.SchemeGroupVersion, authorizationv1.SchemeGroupVersion} {
		c, err := groupClient(rc, gv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gv, err)
		}
		rcs[gv.Group] = c
	}
	core, net := rcs[corev1.GroupName], rcs[networkingv1.GroupName]
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("metrics client: %w", err)
	}
	return &clients{
		metricsHTTP: hc,
		disc:        restDiscovery{core},
		coreREST:    core,
		pods: func(ns string) typed[*corev1.Pod, *corev1.PodList] {
			return gentype.NewClientWithList("pods", core, parameterCodec, ns, func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })
		},
		events: func(ns string) typed[*corev1.Event, *corev1.EventList] {
			return gentype.NewClientWithList("events", core, parameterCodec, ns, func() *corev1.Event { return &corev1.Event{} }, func() *corev1.EventList { return &corev1.EventList{} })
		},
		nodes: gentype.NewClientWithList("nodes", core, parameterCodec, "", func() *corev1.Node { return &corev1.Node{} }, func() *corev1.NodeList { return &corev1.NodeList{} }),
		policies: func(ns string) typed[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList] {
			return gentype.NewClientWithList("networkpolicies", net, parameterCodec, ns,
				func() *networkingv1.NetworkPolicy { return &networkingv1.NetworkPolicy{} }, func() *networkingv1.NetworkPolicyList { return &networkingv1.NetworkPolicyList{} })
		},
		runtimeClasses: gentype.NewClientWithList("runtimeclasses", rcs[nodev1.GroupName], parameterCodec, "",
			func() *nodev1.RuntimeClass { return &nodev1.RuntimeClass{} }, func() *nodev1.RuntimeClassList { return &nodev1.RuntimeClassList{} }),
		reviews: gentype.NewClient("selfsubjectaccessreviews", rcs[authorizationv1.GroupName], parameterCodec, "",
			func() *authorizationv1.SelfSubjectAccessReview { return &authorizationv1.SelfSubjectAccessReview{} }),
	}, nil
}

// restDiscovery answers ServerGroups and ServerVersion from the server's
// /apis and /version, without client-go's discovery client (which
// registers every API group, as its typed clients do).
type restDiscovery struct{ c rest.Interface }

// ServerGroups lists the named API groups (/apis); the core group is not
// among them, and the backend never asks for it.
func (d restDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	raw, err := d.c.Get().AbsPath("/apis").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var l metav1.APIGroupList
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("/apis: %w", err)
	}
	return &l, nil
}

// ServerVersion is the server's /version.
func (d restDiscovery) ServerVersion() (*version.Info, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	raw, err := d.c.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("/version: %w", err)
	}
	return &v, nil
}
