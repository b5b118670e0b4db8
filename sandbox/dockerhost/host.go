package dockerhost

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strings"
)

// errHost classifies a DOCKER_HOST or context host that cannot be used.
var errHost = errors.New("invalid docker host")

// normalizeHost completes host the way the docker CLI does: no scheme means
// tcp://, a tcp:// address without a port gets 2375 (2376 with TLS) and
// without a host gets localhost, and an empty unix:// or npipe:// path means
// the default socket or pipe.
func normalizeHost(host string, withTLS bool, s settings) (string, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		return "", fmt.Errorf("%w: empty", errHost)
	}
	scheme, addr, ok := strings.Cut(host, "://")
	if !ok {
		scheme, addr = "tcp", host
	}
	switch scheme {
	case "unix":
		if addr == "" {
			return "unix://" + s.system("/var/run/docker.sock"), nil
		}
		return "unix://" + addr, nil
	case "npipe":
		if addr == "" {
			return "npipe:////./pipe/docker_engine", nil
		}
		return "npipe://" + addr, nil
	case "ssh":
		if _, err := sshArgs(host); err != nil {
			return "", err
		}
		return host, nil
	case "tcp":
		u, err := url.Parse("tcp://" + addr)
		if err != nil {
			return "", fmt.Errorf("%w: %q: %w", errHost, host, err)
		}
		h, port := u.Hostname(), u.Port()
		if h == "" {
			h = "localhost"
		}
		if port == "" {
			port = "2375"
			if withTLS {
				port = "2376"
			}
		}
		return "tcp://" + net.JoinHostPort(h, port) + strings.TrimSuffix(u.Path, "/"), nil
	default:
		return "", fmt.Errorf("%w: %q: unsupported scheme %q", errHost, host, scheme)
	}
}

// unixPath returns the socket path of a unix:// host.
func unixPath(host string) (string, bool) {
	p, ok := strings.CutPrefix(host, "unix://")
	return p, ok && p != ""
}

// isRemote reports whether host may cross a network.
func isRemote(host string) bool {
	return strings.HasPrefix(host, "tcp://") || strings.HasPrefix(host, "ssh://")
}

func errNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
