package dockerhost

import (
	"os"
	"path"
	"runtime"
	"time"
)

// Options tunes Detect. The zero value detects for the current process on
// the current machine.
type Options struct {
	// ConfigHost is docker.host from MCP Sandbox's config file. When set it
	// is the explicit choice, ahead of DOCKER_HOST and docker contexts, as
	// the config file is the user's word for MCP Sandbox alone;
	// DOCKER_TLS_VERIFY and DOCKER_CERT_PATH apply to it as to DOCKER_HOST.
	// It is an option, not read here, so this package stays below the
	// config package.
	ConfigHost string
	// ConfigFile names the config file in reasons and hints; "" means
	// "the config file".
	ConfigFile string
	// Getenv reads an environment variable; nil means os.Getenv. Detect
	// reads DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH,
	// DOCKER_CONTEXT, DOCKER_CONFIG, COLIMA_HOME, XDG_CONFIG_HOME,
	// XDG_RUNTIME_DIR and TMPDIR through it.
	Getenv func(string) string
	// Home is the user's home directory; "" means os.UserHomeDir.
	Home string
	// GOOS selects the operating system whose known places are probed;
	// "" means runtime.GOOS.
	GOOS string
	// UID is the user id in /run/user/<uid>; "" means the current user's
	// (none on Windows).
	UID string
	// Root is prepended to system-wide paths such as /var/run/docker.sock
	// and /run/podman/podman.sock; "" means the real root. Tests use it to
	// keep the machine's own engines out of the picture.
	Root string
	// Timeout bounds each ping of a local endpoint; 0 means 2s.
	Timeout time.Duration
	// RemoteTimeout bounds each ping of a tcp:// or ssh:// endpoint, which
	// may cross a network and an ssh handshake; 0 means 10s.
	RemoteTimeout time.Duration
	// InfoTimeout bounds /version and /info of an endpoint that answered
	// its ping; 0 means 10s. They only name the engine and its version: an
	// endpoint that is slow to answer them (Podman under load) is still
	// usable, with its engine and version "unknown".
	InfoTimeout time.Duration
}

const (
	defaultTimeout       = 2 * time.Second
	defaultRemoteTimeout = 10 * time.Second
	defaultInfoTimeout   = 10 * time.Second
)

// settings are Options with every default filled in.
type settings struct {
	configHost    string
	configFile    string
	getenv        func(string) string
	home          string
	goos          string
	uid           string
	root          string
	timeout       time.Duration
	remoteTimeout time.Duration
	infoTimeout   time.Duration
}

func (o Options) settings() settings {
	s := settings{
		configHost:    o.ConfigHost,
		configFile:    o.ConfigFile,
		getenv:        o.Getenv,
		home:          o.Home,
		goos:          o.GOOS,
		uid:           o.UID,
		root:          o.Root,
		timeout:       o.Timeout,
		remoteTimeout: o.RemoteTimeout,
		infoTimeout:   o.InfoTimeout,
	}
	if s.getenv == nil {
		s.getenv = os.Getenv
	}
	if s.home == "" {
		// No home leaves only the system-wide places; that is still useful.
		s.home, _ = os.UserHomeDir()
	}
	if s.goos == "" {
		s.goos = runtime.GOOS
	}
	if s.uid == "" && s.goos == runtime.GOOS {
		s.uid = currentUID()
	}
	if s.timeout <= 0 {
		s.timeout = defaultTimeout
	}
	if s.remoteTimeout <= 0 {
		s.remoteTimeout = defaultRemoteTimeout
	}
	if s.infoTimeout <= 0 {
		s.infoTimeout = defaultInfoTimeout
	}
	if s.configFile == "" {
		s.configFile = "the config file"
	}
	return s
}

// system returns the system-wide path p below Root.
func (s settings) system(p string) string {
	if s.root == "" {
		return p
	}
	return path.Join(s.root, p)
}

// inHome returns the path elems below the home directory, or "" when the
// home directory is unknown.
func (s settings) inHome(elems ...string) string {
	if s.home == "" {
		return ""
	}
	return path.Join(append([]string{s.home}, elems...)...)
}

// defaultHost is the endpoint the docker CLI uses when nothing is set.
func (s settings) defaultHost() string {
	if s.goos == "windows" {
		return "npipe:////./pipe/docker_engine"
	}
	return "unix://" + s.system("/var/run/docker.sock")
}
