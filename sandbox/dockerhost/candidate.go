package dockerhost

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/docker/docker/client"
)

// Candidate is one endpoint that Detect considered: where it came from and
// what the ping found there.
type Candidate struct {
	// Host is the endpoint as the docker CLI writes it, for example
	// unix:///Users/x/.colima/default/docker.sock, tcp://10.0.0.5:2376,
	// ssh://me@build-box or npipe:////./pipe/docker_engine.
	Host string `json:"host"`
	// Source says why Host was considered: "DOCKER_HOST", "context colima",
	// "Colima (profile default)", "Docker Desktop", "default socket", ….
	Source string `json:"source"`
	// Explicit is true for the endpoint the user chose with the config's
	// docker.host, DOCKER_HOST or a docker context, as opposed to a probed
	// known place. An explicit endpoint is used or nothing is.
	Explicit bool `json:"explicit,omitempty"`
	// OK is true when the endpoint answered /_ping.
	OK bool `json:"ok"`
	// Missing is true when nothing exists at a local socket path, so no
	// ping was attempted; Error then says which path.
	Missing bool `json:"missing,omitempty"`
	// Error says why the endpoint is not usable; empty when OK.
	Error string `json:"error,omitempty"`
	// Target is the file a local socket path links to, when it is a
	// symlink (Docker Desktop and Colima often link /var/run/docker.sock).
	Target string `json:"target,omitempty"`

	// Engine names the product behind the endpoint: "Docker Desktop",
	// "OrbStack", "Colima", "Rancher Desktop", "Podman" or "Docker Engine".
	Engine string `json:"engine,omitempty"`
	// Version is the engine's version, as /version reports it; "unknown"
	// when the endpoint answered its ping but not /version in time.
	Version string `json:"version,omitempty"`
	// Unidentified says why Version (and perhaps Engine) is "unknown",
	// such as "/version did not answer within 5s".
	Unidentified string `json:"unidentified,omitempty"`
	// OS is the engine's operating system and architecture, such as
	// "linux/arm64"; "windows/…" means Windows containers.
	OS string `json:"os,omitempty"`
	// APIVersion is the highest API version the engine speaks.
	APIVersion string `json:"api_version,omitempty"`

	// TLS is set when the endpoint is reached over TLS.
	TLS *TLSFiles `json:"tls,omitempty"`

	// hint is the engine the source implies, used when /info does not
	// name one.
	hint string
	// why says, for an explicit endpoint, how the user chose it.
	why string
	// choice names an explicit endpoint and where the choice was made,
	// such as "DOCKER_HOST=unix:///x.sock (from the environment)".
	choice string
	// undo says how to give up an explicit choice so that detection runs.
	undo string
	// invalid is set when an explicit choice cannot even be read (a bad
	// host, a missing context): it was never pinged.
	invalid bool
}

// TLSFiles names the TLS material for a tcp:// endpoint. Empty paths are
// left out: no CA means the system's roots, no certificate means no client
// authentication.
type TLSFiles struct {
	CA   string `json:"ca,omitempty"`
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
	// SkipVerify turns off verification of the server's certificate, as
	// DOCKER_CERT_PATH without DOCKER_TLS_VERIFY or a context's
	// SkipTLSVerify do.
	SkipVerify bool `json:"skip_verify,omitempty"`
}

// ClientOptions returns the options that build a Docker client for this
// endpoint with client.NewClientWithOpts: the host, its TLS configuration or
// ssh dialer, and API version negotiation. A problem with the endpoint (an
// unreadable certificate, a malformed ssh URL) surfaces as the error of
// client.NewClientWithOpts.
func (c *Candidate) ClientOptions() []client.Opt {
	if strings.HasPrefix(c.Host, "ssh://") {
		return append(sshClientOptions(c.Host), client.WithAPIVersionNegotiation())
	}
	if c.TLS != nil {
		cfg, err := c.TLS.config()
		if err != nil {
			return []client.Opt{failOpt(err)}
		}
		tr := &http.Transport{
			TLSClientConfig: cfg,
			MaxIdleConns:    6,
			IdleConnTimeout: 30 * time.Second,
		}
		return []client.Opt{
			client.WithHTTPClient(&http.Client{Transport: tr, CheckRedirect: client.CheckRedirect}),
			client.WithHost(c.Host),
			client.WithAPIVersionNegotiation(),
		}
	}
	return []client.Opt{client.WithHost(c.Host), client.WithAPIVersionNegotiation()}
}

// failOpt is a client option that makes client.NewClientWithOpts fail with
// err, so ClientOptions can report problems without a second result.
func failOpt(err error) client.Opt {
	return func(*client.Client) error { return err }
}

// label is how the candidate is named in reasons and hints.
func (c *Candidate) label() string {
	if c.Host == "" {
		return c.Source
	}
	return fmt.Sprintf("%s (%s)", c.Source, c.Host)
}
