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
}

const (
	defaultTimeout       = 2 * time.Second
	defaultRemoteTimeout = 10 * time.Second
)

// settings are Options with every default filled in.
type settings struct {
	getenv        func(string) string
	home          string
	goos          string
	uid           string
	root          string
	timeout       time.Duration
	remoteTimeout time.Duration
}

func (o Options) settings() settings {
	s := settings{
		getenv:        o.Getenv,
		home:          o.Home,
		goos:          o.GOOS,
		uid:           o.UID,
		root:          o.Root,
		timeout:       o.Timeout,
		remoteTimeout: o.RemoteTimeout,
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
