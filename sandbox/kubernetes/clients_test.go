package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeClients are the backend's clients on a fake clientset.
func fakeClients(f *fake.Clientset) *clients {
	return &clients{
		disc:     f.Discovery(),
		coreREST: f.CoreV1().RESTClient(),
		pods:     func(ns string) typed[*corev1.Pod, *corev1.PodList] { return f.CoreV1().Pods(ns) },
		events:   func(ns string) typed[*corev1.Event, *corev1.EventList] { return f.CoreV1().Events(ns) },
		nodes:    f.CoreV1().Nodes(),
		policies: func(ns string) typed[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList] {
			return f.NetworkingV1().NetworkPolicies(ns)
		},
		runtimeClasses: f.NodeV1().RuntimeClasses(),
		reviews:        f.AuthorizationV1().SelfSubjectAccessReviews(),
	}
}
