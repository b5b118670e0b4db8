package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/docker/docker/client"
)

// An ssh:// endpoint is reached the way the docker CLI reaches it: the local
// ssh client runs "docker system dial-stdio" on the remote machine, and the
// Docker API flows over that command's stdin and stdout. The user's own ssh
// configuration (keys, agent, ProxyJump, known hosts) therefore applies.

// sshProgram is the ssh client run for ssh:// endpoints; tests point PATH at
// a stand-in.
const sshProgram = "ssh"

// sshPlaceholderHost is the host HTTP requests name when the connection is
// really an ssh command; the daemon does not look at it.
const sshPlaceholderHost = "http://docker.example.com"

// errSSHURL classifies a malformed ssh:// endpoint.
var errSSHURL = errors.New("invalid ssh endpoint")

// sshArgs returns the arguments for the ssh client that connects to the
// Docker API at the ssh:// URL host, such as
// ssh://me@build-box:2222/run/user/1000/docker.sock. A path, when present,
// names the remote socket.
//
// BatchMode is on because nobody can answer a password prompt when an AI
// client started the server; keys and the agent still work.
func sshArgs(host string) ([]string, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSSHURL, err)
	}
	switch {
	case u.Scheme != "ssh":
		return nil, fmt.Errorf("%w: scheme %q is not ssh", errSSHURL, u.Scheme)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: no host in %q", errSSHURL, host)
	case u.User != nil && hasPassword(u.User):
		return nil, fmt.Errorf("%w: a password in the url is not supported, use a key", errSSHURL)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%w: extra parts in %q", errSSHURL, host)
	}
	args := []string{"-o", "ConnectTimeout=30", "-o", "BatchMode=yes", "-T"}
	if u.User != nil && u.User.Username() != "" {
		args = append(args, "-l", u.User.Username())
	}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	args = append(args, "--", u.Hostname(), "docker")
	if strings.Trim(u.Path, "/") != "" {
		args = append(args, shellQuote("--host=unix://"+u.Path))
	}
	return append(args, "system", "dial-stdio"), nil
}

func hasPassword(u *url.Userinfo) bool {
	_, ok := u.Password()
	return ok
}

// shellQuote quotes s for the remote shell, which ssh hands the command to
// as one string; plain words are left as they are.
func shellQuote(s string) string {
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-=:+@%,", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sshClientOptions returns the client options that reach the Docker API at
// host through the ssh client.
func sshClientOptions(host string) []client.Opt {
	args, err := sshArgs(host)
	if err != nil {
		return []client.Opt{failOpt(err)}
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialCommand(ctx, sshProgram, args...)
	}
	tr := &http.Transport{}
	return []client.Opt{
		client.WithHTTPClient(&http.Client{Transport: tr, CheckRedirect: client.CheckRedirect}),
		client.WithHost(sshPlaceholderHost),
		// WithHost configures the transport for plain tcp; the connection
		// is the ssh command instead, and no proxy applies to it.
		func(*client.Client) error {
			tr.DialContext = dial
			tr.Proxy = nil
			return nil
		},
	}
}
