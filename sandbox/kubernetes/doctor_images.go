package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// ImageProbe is one language's image as doctor checks it on the cluster:
// the program run_code runs there, the images.pull policy, and the
// setting that names the image (for the fix).
type ImageProbe struct {
	Language, Image, Program, Pull, Setting string
}

// LabelDoctorProbe marks doctor's short-lived probe pods (value: the
// pod's name); no sandbox has it.
const LabelDoctorProbe = "k8s.mcp-sandbox.io/doctor-probe"

// probeTimeout bounds one image probe: a pull that has not started by
// then is reported as what the kubelet last said.
const probeTimeout = 90 * time.Second

// checkImages runs each probe's program with --version in a pod of its
// image (hardened as a sandbox, so a "restricted" namespace admits it),
// one image and program once, all at once, and adds a check per language.
func (r *Report) checkImages(ctx context.Context, b *Backend, probes []ImageProbe) {
	why := make([]string, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		if j := firstSame(probes, i); j < i {
			continue
		}
		wg.Go(func() { why[i] = b.probeImage(ctx, p) })
	}
	wg.Wait()
	for i, p := range probes {
		w := why[firstSame(probes, i)]
		c := Check{Name: "image " + p.Language, OK: w == "", Detail: fmt.Sprintf("%s runs %s", p.Image, p.Program)}
		if w != "" {
			c.Detail = fmt.Sprintf("%s: %s", p.Image, w)
			c.Fix = fmt.Sprintf("set %s to an image the nodes can get that has %s", p.Setting, p.Program)
		}
		r.add(c)
	}
}

// firstSame is the index of the first probe of the same image and program
// as probes[i].
func firstSame(probes []ImageProbe, i int) int {
	for j := range i {
		if probes[j].Image == probes[i].Image && probes[j].Program == probes[i].Program && probes[j].Pull == probes[i].Pull {
			return j
		}
	}
	return i
}

// probeImage runs `program --version` in a pod of the image and says why
// it cannot run there, or "" when it can. Only "not found" and "cannot be
// run" count against it: a program that refuses --version is there.
func (b *Backend) probeImage(ctx context.Context, p ImageProbe) string {
	pod, err := probePod(p, b.namespace, b.cfg.RuntimeClass)
	if err != nil {
		return err.Error()
	}
	pods := b.cs.pods(b.namespace)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return "cannot start a pod of it: " + err.Error()
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		_ = pods.Delete(dctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		cancel()
	}()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	last := "the pod did not start"
	for {
		got, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil {
			why, done := probeOutcome(got, p.Program)
			if done {
				return why
			}
			last = why
		} else if apierrors.IsNotFound(err) {
			return "the probe pod was deleted before it ended"
		}
		select {
		case <-ctx.Done():
			return fmt.Sprintf("no answer within %v: %s", probeTimeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// probePod is the probe's pod: a sandbox's (Pod), running the program
// with --version once, labelled as a probe and not as a sandbox.
func probePod(p ImageProbe, ns, runtimeClass string) (*corev1.Pod, error) {
	name := backend.NamePrefix + "doctor-" + randomHex(6)
	pod, err := Pod(backend.ContainerSpec{
		Name: name, Image: p.Image, Labels: map[string]string{backend.LabelID: name}, Network: "none",
		MemoryBytes: 128 << 20, NanoCPUs: 500_000_000, WorkspaceMB: 1,
	}, Options{Namespace: ns, RuntimeClass: runtimeClass})
	if err != nil {
		return nil, err
	}
	pod.Labels = map[string]string{LabelDoctorProbe: name}
	pod.Annotations = nil
	pod.Spec.ActiveDeadlineSeconds = ptr(int64(probeTimeout.Seconds()) + 30)
	c := &pod.Spec.Containers[0]
	c.Command, c.Args = []string{p.Program, "--version"}, nil
	switch p.Pull {
	case "never":
		c.ImagePullPolicy = corev1.PullNever
	case "always":
		c.ImagePullPolicy = corev1.PullAlways
	}
	return pod, nil
}

// probeOutcome reads the probe pod: done with "" when program ran,
// done with why not when it cannot (the image cannot be had, the program
// is not in it), else not done with what the kubelet says so far.
func probeOutcome(pod *corev1.Pod, program string) (why string, done bool) {
	if len(pod.Status.ContainerStatuses) == 0 {
		if pod.Status.Phase == corev1.PodFailed {
			return "the probe pod failed: " + pod.Status.Reason + " " + pod.Status.Message, true
		}
		return "the pod is " + string(pod.Status.Phase), false
	}
	st := pod.Status.ContainerStatuses[0].State
	switch {
	case st.Terminated != nil:
		t := st.Terminated
		switch {
		case t.ExitCode == 127 || strings.Contains(t.Message, "not found") || strings.Contains(t.Message, "no such file"):
			return program + " is not in the image", true
		case t.ExitCode == 126 || t.Reason == "StartError":
			return "its runner cannot be run (" + firstLine(t.Reason+": "+t.Message) + ")", true
		}
		return "", true
	case st.Waiting != nil:
		w := st.Waiting
		switch w.Reason {
		case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
			return "the nodes cannot get the image (" + firstLine(w.Reason+": "+w.Message) + ")", true
		case "CreateContainerError", "CreateContainerConfigError", "RunContainerError":
			return "its runner cannot be run (" + firstLine(w.Reason+": "+w.Message) + ")", true
		}
		return "the container is waiting: " + w.Reason, false
	}
	return "the container is running", false
}

// firstLine is s up to its first newline, at most 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
