package kubernetes

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// use_agent_sandbox on a cluster without agent-sandbox: "always" is an
// error naming the setting, "auto" and "never" make plain pods.
func TestUseAgentSandboxWithoutIt(t *testing.T) {
	for _, c := range []struct {
		mode    string
		wantErr bool
	}{{"always", true}, {"auto", false}, {"", false}, {"never", false}} {
		b := &Backend{cfg: Config{UseAgentSandbox: c.mode}, cs: fake.NewClientset()}
		use, err := b.useAgentSandbox()
		if use || (err != nil) != c.wantErr {
			t.Errorf("%q: use %v, err %v; want plain pods, error %v", c.mode, use, err, c.wantErr)
		}
		if c.wantErr && (!errors.Is(err, ErrNoAgentSandbox) || !strings.Contains(err.Error(), `"always"`)) {
			t.Errorf("%q: %v, want it to name the setting and wrap ErrNoAgentSandbox", c.mode, err)
		}
	}
}
