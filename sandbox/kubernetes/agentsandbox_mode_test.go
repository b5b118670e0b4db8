package kubernetes

import (
	"errors"
	"strings"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// use_agent_sandbox on a cluster without agent-sandbox: "always" is an
// error naming the setting, "auto" and "never" make plain pods.
func TestUseAgentSandboxWithoutIt(t *testing.T) {
	for _, c := range []struct {
		mode    string
		wantErr bool
	}{{"always", true}, {"auto", false}, {"", false}, {"never", false}} {
		b := &Backend{cfg: Config{UseAgentSandbox: c.mode}, cs: fakeClients(fake.NewClientset())}
		use, err := b.useAgentSandbox()
		if use || (err != nil) != c.wantErr {
			t.Errorf("%q: use %v, err %v; want plain pods, error %v", c.mode, use, err, c.wantErr)
		}
		if c.wantErr && (!errors.Is(err, ErrNoAgentSandbox) || !strings.Contains(err.Error(), `"always"`)) {
			t.Errorf("%q: %v, want it to name the setting and wrap ErrNoAgentSandbox", c.mode, err)
		}
	}
}

// docker.runtime = "auto" asks RuntimeRegistered("runsc"): with
// runtime_class set, only that class answers (a cluster's other gVisor
// class must not turn a kata sandbox into a failed runsc one); without
// it, any class running the handler does.
func TestRuntimeRegistered(t *testing.T) {
	classes := []runtime.Object{
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata"},
	}
	for _, c := range []struct {
		class, name string
		want        bool
	}{
		{"", "runsc", true}, {"", "gvisor", true}, {"", "youki", false},
		{"kata", "runsc", false}, {"kata", "kata", true}, {"gvisor", "runsc", true},
	} {
		b := &Backend{cfg: Config{RuntimeClass: c.class}, cs: fakeClients(fake.NewClientset(classes...))}
		got, err := b.RuntimeRegistered(t.Context(), c.name)
		if err != nil || got != c.want {
			t.Errorf("runtime_class %q: RuntimeRegistered(%q) = %v, %v; want %v", c.class, c.name, got, err, c.want)
		}
	}
}
