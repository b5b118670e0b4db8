package hostcopy

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// Fence returns the host-file policy of cfg. MCP Sandbox's own config
// and state (config.OwnPaths) are denied in both directions whatever the
// lists say: the config decides the policy and may hold secrets, the
// state directory holds the HTTP token. So are the engine's and the
// cluster's credentials (engineCredentials).
func Fence(cfg *config.Config) hostfs.Fence {
	own := ProtectedPaths(cfg)
	return hostfs.Fence{
		ReadRoots: cfg.Files.ReadRoots,
		Deny:      append(append([]string{}, cfg.Files.ReadDeny...), own...),
		WriteRoot: cfg.Files.WriteRoot,
		WriteDeny: append(append([]string{}, cfg.Files.WriteDeny...), own...),
		MaxBytes:  int64(cfg.Files.MaxCopyMB) << 20,
	}
}

// engineCredentials are the files that give access to the engine or the
// cluster the sandboxes run on, wherever the user keeps them: the
// kubeconfig the Kubernetes backend reads (kubernetes.kubeconfig, every
// file of $KUBECONFIG) and the Docker client's TLS certificates and config
// ($DOCKER_CERT_PATH, $DOCKER_CONFIG). The default places (~/.kube,
// ~/.docker) are on the deny lists already, but a list the user replaced,
// or a kubeconfig kept elsewhere, must not hand a sandbox the keys to the
// cluster that runs it. They are denied in both directions, like MCP
// Sandbox's own config and state.
func engineCredentials(cfg *config.Config) []string {
	var out []string
	add := func(p string) {
		if p = config.ExpandHome(p); p != "" && filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	add(cfg.Kubernetes.Kubeconfig)
	for _, p := range filepath.SplitList(os.Getenv("KUBECONFIG")) {
		add(p)
	}
	add(os.Getenv("DOCKER_CERT_PATH"))
	add(os.Getenv("DOCKER_CONFIG"))
	return out
}

// ProtectedPaths are the places copy_in and copy_out refuse whatever the
// config's lists say: MCP Sandbox's own config and state (the config
// decides the policy and may hold secrets, the state directory holds the
// HTTP token and the tray's answers), the config file this server was
// started with, and engineCredentials. doctor shows the same list.
func ProtectedPaths(cfg *config.Config) []string {
	own := config.OwnPaths()
	if cfg.Source != "" {
		own = append(own, cfg.Source) // serve --config names a file of its own
	}
	var out []string
	for _, p := range append(own, engineCredentials(cfg)...) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
