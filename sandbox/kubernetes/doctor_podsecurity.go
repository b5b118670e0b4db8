package kubernetes

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// LabelEnforce is the namespace label of Pod Security admission's
// enforced level; docs/kubernetes.md sets it to "restricted".
const LabelEnforce = "pod-security.kubernetes.io/enforce"

// checkPodSecurity asks whether the namespace enforces Pod Security's
// "restricted" level: without it, whoever holds the Role can make a
// privileged pod there. It tells by a dry-run create of a pod that level
// forbids (nothing is made), which needs only create pods (the Role's),
// not reading the namespace (a cluster-scoped object the Role does not
// grant).
func (r *Report) checkPodSecurity(ctx context.Context, b *Backend) {
	fix := fmt.Sprintf("kubectl label namespace %s %s=restricted (as a cluster admin; see docs/kubernetes.md)", b.namespace, LabelEnforce)
	_, err := b.cs.pods(b.namespace).Create(ctx, unrestrictedPod(b.namespace), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil:
		r.add(Check{Name: "pod security", Fix: fix, Detail: fmt.Sprintf(
			"namespace %s admits pods Pod Security's \"restricted\" level forbids (no %s=restricted label)", b.namespace, LabelEnforce)})
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), `PodSecurity "restricted`):
		r.add(Check{Name: "pod security", OK: true, Detail: fmt.Sprintf("namespace %s enforces Pod Security \"restricted\"", b.namespace)})
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "PodSecurity"):
		r.add(Check{Name: "pod security", Fix: fix, Detail: fmt.Sprintf(
			"namespace %s enforces a Pod Security level below \"restricted\": %s", b.namespace, firstLine(err.Error()))})
	default:
		r.add(Check{Name: "pod security", Fix: fix, Detail: fmt.Sprintf(
			"cannot tell whether namespace %s enforces Pod Security \"restricted\" (a dry-run pod: %s)", b.namespace, firstLine(err.Error()))})
	}
}

// unrestrictedPod is a pod Pod Security's "restricted" level forbids (it
// may run as root, escalate and keep its capabilities) and "baseline"
// admits: only created with dry run.
func unrestrictedPod(ns string) *corev1.Pod {
	name := backend.NamePrefix + "doctor-podsecurity"
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelDoctorProbe: name}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}
