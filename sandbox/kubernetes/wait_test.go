package kubernetes

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod being deleted is Removed, whatever its container's exit on the
// way out; one whose container ended on its own says how.
func TestExitedDeleted(t *testing.T) {
	pod, err := Pod(testSpec(), Options{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	if ex, ok := exited(pod); !ok || ex.Removed || ex.ExitCode != 0 {
		t.Errorf("ended on its own: %+v, %v", ex, ok)
	}
	pod.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if ex, ok := exited(pod); !ok || !ex.Removed {
		t.Errorf("being deleted: %+v, %v; want Removed", ex, ok)
	}
}
