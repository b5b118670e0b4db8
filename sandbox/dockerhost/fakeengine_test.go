package dockerhost

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"
)

// fakeEngine answers the few Docker API calls Detect makes, the way a
// Docker-compatible engine does; what it says about itself varies so that
// engine naming is exercised.
type fakeEngine struct {
	OperatingSystem string   // /info OperatingSystem
	Name            string   // /info Name (the host name)
	Platform        string   // /version Platform.Name
	Components      []string // /version component names
	Version         string
	// VersionDelay holds /version (and /info) back, as Podman's API does
	// under load; a client that gives up first gets no answer.
	VersionDelay time.Duration
}

// Engines as they describe themselves, after the real ones.
var (
	fakeDocker        = fakeEngine{OperatingSystem: "Debian GNU/Linux 12 (bookworm)", Name: "build-box", Platform: "Docker Engine - Community", Components: []string{"Engine", "containerd"}, Version: "28.5.2"}
	fakeDockerDesktop = fakeEngine{OperatingSystem: "Docker Desktop", Name: "docker-desktop", Platform: "Docker Desktop 4.44.0 (201307)", Components: []string{"Engine"}, Version: "28.3.2"}
	fakeOrbStack      = fakeEngine{OperatingSystem: "OrbStack", Name: "orbstack", Components: []string{"Engine"}, Version: "28.3.3"}
	fakeColima        = fakeEngine{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "colima", Components: []string{"Engine"}, Version: "27.4.0"}
	fakeColimaWork    = fakeEngine{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "colima-work", Components: []string{"Engine"}, Version: "27.4.0"}
	fakeRancher       = fakeEngine{OperatingSystem: "Alpine Linux v3.20", Name: "lima-rancher-desktop", Components: []string{"Engine"}, Version: "27.3.1"}
	fakePodman        = fakeEngine{OperatingSystem: "fedora", Name: "laptop", Platform: "linux/amd64/fedora-42", Components: []string{"Podman Engine", "Conmon", "OCI Runtime (crun)"}, Version: "5.5.2"}
	fakeRootless      = fakeEngine{OperatingSystem: "Ubuntu 24.04.2 LTS", Name: "laptop", Components: []string{"Engine"}, Version: "28.5.2"}
)

var versionPrefix = regexp.MustCompile(`^/v1\.[0-9]+`)

func (e fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Api-Version", "1.45")
	w.Header().Set("Ostype", "linux")
	switch versionPrefix.ReplaceAllString(r.URL.Path, "") {
	case "/_ping":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("OK"))
	case "/version":
		if !e.wait(r) {
			return
		}
		v := types.Version{Version: e.Version, APIVersion: "1.45", MinAPIVersion: "1.24", Os: "linux", Arch: "amd64"}
		v.Platform.Name = e.Platform
		for _, c := range e.Components {
			v.Components = append(v.Components, types.ComponentVersion{Name: c, Version: e.Version})
		}
		json.NewEncoder(w).Encode(v)
	case "/info":
		if !e.wait(r) {
			return
		}
		json.NewEncoder(w).Encode(system.Info{OperatingSystem: e.OperatingSystem, Name: e.Name, OSType: "linux"})
	default:
		http.Error(w, `{"message":"page not found"}`, http.StatusNotFound)
	}
}

// wait holds a request back for VersionDelay; false when the client gave up
// first.
func (e fakeEngine) wait(r *http.Request) bool {
	if e.VersionDelay <= 0 {
		return true
	}
	t := time.NewTimer(e.VersionDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// serveFake starts e on a unix socket at path, creating its directory, and
// stops it when the test ends.
func serveFake(t *testing.T, path string, e fakeEngine) {
	t.Helper()
	l := listenUnix(t, path)
	srv := &http.Server{Handler: e}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

// listenUnix listens on a unix socket at path, creating its directory.
func listenUnix(t *testing.T, path string) *net.UnixListener {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatalf("listen on %s: %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// staleSocket leaves a socket file at path that nobody listens on, as an
// engine that quit leaves behind.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l := listenUnix(t, path)
	l.SetUnlinkOnClose(false)
	l.Close()
}

// hungSocket accepts connections at path and never answers.
func hungSocket(t *testing.T, path string) {
	t.Helper()
	l := listenUnix(t, path)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err == nil {
				conns = append(conns, c)
			}
			select {
			case <-done:
				return
			default:
			}
		}
	}()
}
