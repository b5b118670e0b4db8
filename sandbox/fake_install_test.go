package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
)

// helperSpy is the fake backend, keeping the helper specs it is given.
type helperSpy struct {
	*fake.Backend
	mu    sync.Mutex
	specs []backend.HelperSpec
}

func (s *helperSpy) RunHelper(ctx context.Context, id string, spec backend.HelperSpec) (backend.ExecStatus, error) {
	s.mu.Lock()
	s.specs = append(s.specs, spec)
	s.mu.Unlock()
	return s.Backend.RunHelper(ctx, id, spec)
}

// TestFakeInstallHelperSpec: the install helper is asked for under the
// sandbox's runtime, with no network, and with its proxy started once it
// runs; where that proxy cannot run (the fake's images cannot run the
// agent), the install is refused, never given a network instead.
func TestFakeInstallHelperSpec(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spy := &helperSpy{Backend: fake.New()}
		cfg := config.Default()
		cfg.Source = "test-config.toml"
		cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
		cfg.Images.Pull, cfg.Pool.Size, cfg.Docker.Runtime = "never", 0, "runsc"
		eng := sandbox.NewEngine(sandbox.Options{Backend: spy, Config: config.Static(cfg), OwnerID: "fake-owner", TickInterval: fakeTick, UsageInterval: fakeTick})
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { cancel(); _ = eng.Close(context.Background()) }()
		go eng.Run(ctx)
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = eng.InstallPackages(ctx, sb.ID, install.Request{Manager: "pip", Packages: []string{"x"}}, nil)
		if !errors.Is(err, sandbox.ErrPolicy) || !strings.Contains(err.Error(), "command agent inside the install helper") {
			t.Errorf("install where the helper's agent cannot run: %v", err)
		}
		if len(spy.specs) != 1 {
			t.Fatalf("%d helpers", len(spy.specs))
		}
		spec := spy.specs[0]
		if spec.Runtime != "runsc" || spec.Network != "none" || spec.Started == nil {
			t.Errorf("helper spec: runtime %q, network %q, proxy hook %v; want runsc, none, set", spec.Runtime, spec.Network, spec.Started != nil)
		}
		env := strings.Join(spec.Env, " ")
		if !strings.Contains(env, "HTTPS_PROXY=http://127.0.0.1:3128") || strings.Contains(env, "NO_PROXY") {
			t.Errorf("helper env %q: want the proxy and no NO_PROXY", env)
		}
	})
}
