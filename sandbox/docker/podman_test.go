package docker

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// An engine that does not say which it is (its /version fails: a fault a
// real engine does not produce on demand, made here by a proxy in front of
// the real one) is taken for neither Docker nor Podman: creating a sandbox
// fails, saying why, and leaves nothing behind.
func TestEngineThatDoesNotSayWhichFailsCreate(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	sock, ok := strings.CutPrefix(cli.DaemonHost(), "unix://")
	if !ok {
		t.Skipf("the proxy forwards to a unix socket; the engine is at %s", cli.DaemonHost())
	}
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "engine.sock"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "engine" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/version") {
			http.Error(w, `{"message":"no version today"}`, http.StatusInternalServerError)
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	pcli, err := client.NewClientWithOpts(client.WithHost("unix://"+ln.Addr().String()), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pcli.Close() })

	owner := "version-test-" + randomSuffix()
	ownerCleanup(t, New(cli, nil), cli, owner)
	b := New(pcli, testenv.Logger(t))
	id, err := b.Create(context.Background(), testSpec(owner))
	if err == nil || id != "" || !strings.Contains(err.Error(), "no version today") {
		t.Errorf("Create = %q, %v; want the engine's failure to say which it is", id, err)
	}
	if c, v := ownerContainers(t, cli, owner), ownerVolumes(t, cli, owner); len(c)+len(v) > 0 {
		t.Errorf("left behind: containers %v, volumes %v", c, v)
	}
}
