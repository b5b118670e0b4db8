package sandbox_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// countingListener accepts on addr and counts the connections that
// reach it; it never answers.
func countingListener(t *testing.T, addr string) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		testenv.Missing(t, "a listener on "+addr+": "+err.Error())
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return l.Addr().String(), &n
}

// bridgeGateway is the engine's bridge address on this host (where a
// container on the default network reaches the host).
func bridgeGateway(t *testing.T, cli *client.Client) string {
	t.Helper()
	nw, err := cli.NetworkInspect(context.Background(), "bridge", network.InspectOptions{})
	if err != nil || len(nw.IPAM.Config) == 0 {
		testenv.Missing(t, "the engine's bridge network")
	}
	if gw := nw.IPAM.Config[0].Gateway; gw != "" {
		return gw
	}
	// Some engines list only the subnet; the gateway is its first address.
	pfx, err := netip.ParsePrefix(nw.IPAM.Config[0].Subnet)
	if err != nil {
		testenv.Missing(t, "the engine's bridge gateway")
	}
	return pfx.Masked().Addr().Next().String()
}

// TestInstallHelperIsolation: the install helper runs under the
// sandbox's runtime with no network interface of its own; the code an
// installed package runs (its build, as a setup.py's) reaches neither
// the host's bridge address nor another loopback port, directly or
// through the proxy, while the index install_env names is reached.
func TestInstallHelperIsolation(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	pipURL, _, host, _ := packageIndex(t)
	bridge, bridgeHits := countingListener(t, bridgeGateway(t, cli)+":0")
	local, localHits := countingListener(t, "127.0.0.1:0")
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Network.InstallEnv = map[string]string{"PIP_INDEX_URL": pipURL, "PIP_TRUSTED_HOST": host,
			"MCPSBX_PROBE": bridge + "," + local + ",169.254.169.254:80"}
	})
	py := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	sbox, err := cli.ContainerInspect(context.Background(), py.ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var helper container.InspectResponse
	inspect := func(string, []byte) {
		once.Do(func() { helper = inspectHelper(t, cli, py.ID) })
	}
	res, err := eng.InstallPackages(context.Background(), py.ID, install.Request{Packages: []string{"mcpsbxprobe"}, Output: inspect})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("install: %+v %v", res, err)
	}
	if helper.HostConfig == nil {
		t.Fatal("the helper was not seen while it ran")
	}
	if got, want := helper.HostConfig.Runtime, sbox.HostConfig.Runtime; got != want || (testenv.Runtime() == "runsc" && got != "runsc") {
		t.Errorf("helper runtime %q, sandbox's %q (test runtime %q)", got, want, testenv.Runtime())
	}
	if helper.HostConfig.NetworkMode != "none" {
		t.Errorf("helper network mode %q, want none", helper.HostConfig.NetworkMode)
	}
	probe := mustRun(t, eng, py.ID, "import mcpsbxprobe; print(mcpsbxprobe.VALUE)").Stdout
	t.Logf("probe: %s", probe)
	if strings.Contains(probe, "connected") || strings.Contains(probe, "proxy=200") || strings.Count(probe, "proxy=403") != 3 {
		t.Errorf("the package's build reached past the index: %s", probe)
	}
	if n, m := bridgeHits.Load(), localHits.Load(); n != 0 || m != 0 {
		t.Errorf("the bridge address got %d connections, another loopback port %d; want none", n, m)
	}
	if len(res.Reached) != 1 || !strings.HasPrefix(res.Reached[0], host+":") {
		t.Errorf("reached %q, want the index alone", res.Reached)
	}
}

// inspectHelper inspects the install helper of sandbox id, which runs.
func inspectHelper(t *testing.T, cli *client.Client, id string) container.InspectResponse {
	list, err := cli.ContainerList(context.Background(), container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", backend.LabelHelper+"="+id)),
	})
	if err != nil || len(list) != 1 {
		t.Errorf("helpers of %s: %d, %v", id, len(list), err)
		return container.InspectResponse{}
	}
	ins, err := cli.ContainerInspect(context.Background(), list[0].ID)
	if err != nil {
		t.Errorf("inspect the helper: %v", err)
	}
	return ins
}
