//go:build !windows

package instance

import (
	"net"
	"os"
	"path/filepath"
	"time"
)

// endpoint is the unix socket next to the lock: the state directory is the
// user's own (0700), so the socket is too.
func endpoint(dir string) (string, error) {
	return filepath.Join(dir, "tray.sock"), nil
}

// listen removes a socket file a crashed tray left (the caller holds the
// lock, so no live tray owns it) and listens on a new one.
func listen(ep string) (net.Listener, error) {
	os.Remove(ep)
	return net.Listen("unix", ep)
}

func dial(ep string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("unix", ep, timeout)
}

func removeEndpoint(ep string) { os.Remove(ep) }
