package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Config is the whole configuration file.
type Config struct {
	Backend Backend `toml:"backend"`
	Docker  Docker  `toml:"docker"`
	// Kubernetes is read when Backend.Kind is "kubernetes".
	Kubernetes Kubernetes          `toml:"kubernetes"`
	Images     Images              `toml:"images"`
	Languages  map[string]Language `toml:"languages"`
	Limits     Limits              `toml:"limits"`
	Network    Network             `toml:"network"`
	Files      Files               `toml:"files"`
	Pool       Pool                `toml:"pool"`
	Update     Update              `toml:"update"`
	Tray       Tray                `toml:"tray"`
	HTTP       HTTP                `toml:"http"`

	// Source is the file this was read from ("" for pure defaults).
	Source string `toml:"-"`
}

// Backend selects the container platform: Docker (and engines that speak
// its API) or a Kubernetes cluster.
type Backend struct {
	Kind string `toml:"kind"` // "", "docker" or "kubernetes"
}

// BackendKubernetes is backend.kind's value for Kubernetes: the sandboxes
// are pods of the cluster the [kubernetes] table names.
const BackendKubernetes = "kubernetes"

// Kubernetes is where and how the Kubernetes backend makes its sandboxes
// (sandbox/kubernetes.Config).
type Kubernetes struct {
	// Kubeconfig is the kubeconfig file; empty: $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string `toml:"kubeconfig"`
	// Context is the kubeconfig context; empty: the current one.
	Context string `toml:"context"`
	// Namespace holds the sandboxes; empty: the context's, else "default".
	Namespace string `toml:"namespace"`
	// RuntimeClass is each pod's runtimeClassName ("gvisor"); empty: the
	// cluster's default.
	RuntimeClass string `toml:"runtime_class"`
	// UseAgentSandbox is "auto", "always" or "never".
	UseAgentSandbox string `toml:"use_agent_sandbox"`
	// WarmPool is the number of pre-warmed sandboxes per language.
	WarmPool map[string]int `toml:"warm_pool"`
	// LeaseSeconds is how far ahead the server keeps each sandbox's
	// shutdownTime (agent-sandbox), renewed while it lives: the cluster
	// removes a dead server's sandboxes within it. 0: 180.
	LeaseSeconds int `toml:"lease_seconds"`
	// CPURequest is each sandbox pod's CPU request, a Kubernetes quantity
	// ("50m", "0.25"; at most its CPU limit): what the scheduler reserves
	// for it. Empty: a tenth of its CPU limit.
	CPURequest string `toml:"cpu_request"`
}

// Docker selects the engine and the container runtime.
type Docker struct {
	Host    string `toml:"host"`    // empty: detect
	Runtime string `toml:"runtime"` // "", "runc", "runsc", "auto"
}

// Images maps the built-in languages to images and says which images a tool
// call may ask for.
type Images struct {
	Python     string   `toml:"python"`
	JavaScript string   `toml:"javascript"`
	Bash       string   `toml:"bash"`
	Pull       string   `toml:"pull"`    // never | missing | always
	Allowed    []string `toml:"allowed"` // patterns; empty: only the language images
}

// Language is a further language: its image, how to run a file, and the
// file's extension. The built-in languages may be overridden the same way.
type Language struct {
	Image     string   `toml:"image"`
	Run       []string `toml:"run"` // "{file}" is replaced by the file's path
	Extension string   `toml:"extension"`
	// Runner names a resident interpreter ("python", "node"); empty: none.
	Runner string `toml:"runner"`
}

// Limits are the policy's resource limits: defaults and, for the ones a
// tool call may ask for, the maximum.
type Limits struct {
	MemoryMB              int     `toml:"memory_mb"`
	CPUs                  float64 `toml:"cpus"`
	Pids                  int     `toml:"pids"`
	WorkspaceMB           int     `toml:"workspace_mb"`
	ExecTimeoutSeconds    int     `toml:"exec_timeout_seconds"`
	MaxExecTimeoutSeconds int     `toml:"max_exec_timeout_seconds"`
	OutputBytes           int     `toml:"output_bytes"`
	// OutputFileBytes bounds the whole output of a call that the sandbox
	// keeps in a file when what is returned was cut (0: none is kept).
	OutputFileBytes int `toml:"output_file_bytes"`
	// ImageBytes bounds the figures one run_code returns, all together.
	ImageBytes     int `toml:"image_bytes"`
	IdleTTLMinutes int `toml:"idle_ttl_minutes"`
	MaxSandboxes   int `toml:"max_sandboxes"`
}

// Network is the network policy.
type Network struct {
	Default     string `toml:"default"`      // none | allowlist | egress
	AllowEgress bool   `toml:"allow_egress"` // may sandbox_create ask for egress
	// AllowDomains are the entries an allowlist sandbox may reach without
	// asking a person: "pypi.org", "*.pythonhosted.org" (subdomains
	// only), either with ":port" (else 80 and 443), or an address with
	// its port ("127.0.0.2:8080"). See sandbox/netproxy.
	AllowDomains []string `toml:"allow_domains"`
	// Ask says whether a person may be asked for entries beyond
	// AllowDomains.
	Ask bool `toml:"ask"`
	// MaxConnections bounds an allowlist sandbox's open proxy connections.
	MaxConnections int  `toml:"max_connections"`
	Install        bool `toml:"install"` // may install_packages fetch packages
	// InstallEnv is passed to the package installer only (never to the
	// sandbox), e.g. PIP_INDEX_URL for a private index.
	InstallEnv map[string]string `toml:"install_env"`
}

// Files fences the host paths the copy tools may touch.
type Files struct {
	ReadRoots []string `toml:"read_roots"`
	// ReadDeny are paths below the read roots that copy_in never reads:
	// where credentials live. Compared by identity, not only by name. A
	// list in the file adds to DefaultReadDeny unless ReadDenyReplace.
	ReadDeny []string `toml:"read_deny"`
	// ReadDenyReplace makes the file's read_deny replace the defaults
	// instead of adding to them.
	ReadDenyReplace bool   `toml:"read_deny_replace"`
	WriteRoot       string `toml:"write_root"`
	// WriteDeny are paths copy_out never writes, replaces or creates,
	// whatever the write root: where a written file would run code or
	// change trust. "$PATH" stands for every PATH directory. A list in
	// the file adds to DefaultWriteDeny unless WriteDenyReplace.
	WriteDeny []string `toml:"write_deny"`
	// WriteDenyReplace makes the file's write_deny replace the defaults.
	WriteDenyReplace bool `toml:"write_deny_replace"`
	MaxCopyMB        int  `toml:"max_copy_mb"`
	// ApplyRoots are the directories propose_changes may change files
	// below ("~" allowed); empty: the read roots.
	ApplyRoots []string `toml:"apply_roots"`
	// CopyOutLinks lets copy_out make the symlinks of a copied tree whose
	// target, resolved on the host inside the copy, stays inside it. Off
	// by default: copy_out makes no symlink on the host and lists them.
	CopyOutLinks bool `toml:"copy_out_links"`
}

// ApplyRootsOrRead returns ApplyRoots, or the read roots when it is
// empty (the default).
func (f Files) ApplyRootsOrRead() []string {
	if len(f.ApplyRoots) == 0 {
		return f.ReadRoots
	}
	return f.ApplyRoots
}

// DefaultReadDeny lists where credentials usually live in a home
// directory: keys, cloud and registry logins, password stores, keyrings,
// and the AI clients' own configs (which hold other servers' secrets).
func DefaultReadDeny() []string {
	return []string{
		"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker",
		"~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.npmrc", "~/.pypirc", "~/.config/pip",
		"~/.password-store", "~/.local/share/keyrings", "~/Library/Keychains",
		"~/.config/Claude", "~/Library/Application Support/Claude", "~/AppData/Roaming/Claude",
		"~/.claude", "~/.claude.json", "~/.cursor", "~/.codeium", "~/.gemini", "~/.codex",
		"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/Library/Application Support/Google/Chrome",
	}
}

// ClientConfigPaths lists the AI clients' MCP config files and
// directories (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf,
// Gemini CLI, LM Studio, Zed, Codex) on Linux, macOS and Windows. A test
// of app/clientconfig checks that every path it writes is covered.
func ClientConfigPaths() []string {
	return []string{
		"~/.config/Claude", "~/Library/Application Support/Claude", "~/AppData/Roaming/Claude",
		"~/.claude", "~/.claude.json", "~/.cursor", "~/.codeium", "~/.gemini", "~/.codex", "~/.lmstudio",
		"~/.config/Code/User", "~/Library/Application Support/Code/User", "~/AppData/Roaming/Code/User",
		"~/.config/zed", "~/AppData/Roaming/Zed",
	}
}

// DefaultWriteDeny lists where a file copy_out wrote would run code or
// change who is trusted: shell and session start-up files, ssh and gpg,
// tools whose config names programs to run (docker, kubectl, aws, pip,
// npm, git, editors), autostart, systemd user units and LaunchAgents, the
// AI clients' configs, the user's bin directories and every PATH
// directory ("$PATH"). MCP Sandbox's own config and state are added by
// the server whatever the list says.
func DefaultWriteDeny() []string {
	return append([]string{
		"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.bash_aliases",
		"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.config/fish", "~/.inputrc",
		"~/.pam_environment", "~/.config/environment.d", "~/.xprofile", "~/.xsessionrc", "~/.xinitrc",
		"~/.ssh", "~/.gnupg", "~/.gitconfig", "~/.config/git",
		// Tools that run what their config names: credential helpers and
		// processes, exec plugins, package indexes, editors' start-up.
		"~/.docker", "~/.kube", "~/.aws", "~/.npmrc", "~/.config/pip", "~/.pip",
		"~/.vimrc", "~/.config/nvim", "~/.emacs", "~/.emacs.d",
		"~/.config/autostart", "~/.config/systemd", "~/.config/plasma-workspace", "~/.local/share/applications",
		"~/Library/LaunchAgents",
		"~/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup",
		"~/Documents/WindowsPowerShell", "~/Documents/PowerShell",
		"~/.local/bin", "~/bin", "$PATH",
	}, ClientConfigPaths()...)
}

// mergeDeny returns defaults followed by the entries of user that are not
// among them: a list written in the file adds to the defaults.
func mergeDeny(defaults, user []string) []string {
	out := append([]string{}, defaults...)
	for _, e := range user {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// DenyAdded is what a deny list holds beyond its defaults: what the file
// says, when list was merged with them (replace false); the whole list
// when it replaces them.
func DenyAdded(list, defaults []string, replace bool) []string {
	if replace {
		return slices.Clone(list)
	}
	out := []string{}
	for _, e := range list {
		if !slices.Contains(defaults, e) {
			out = append(out, e)
		}
	}
	return out
}

// DenyWith is the deny list in effect when the file says added: added
// after the defaults, or added alone when it replaces them.
func DenyWith(added, defaults []string, replace bool) []string {
	if replace {
		return slices.Clone(added)
	}
	return mergeDeny(defaults, added)
}

// Pool keeps ready sandboxes warm.
type Pool struct {
	Size      int      `toml:"size"`
	Languages []string `toml:"languages"`
	// MaxSize is how far the pool of a language grows while claims find
	// it empty (a burst of parallel calls); below Size it means Size.
	MaxSize int `toml:"max_size"`
	// IdleSeconds is how long a grown pool waits without a claim before
	// it shrinks back to Size.
	IdleSeconds int `toml:"idle_seconds"`
}

// Update configures the tray's update check (off by default).
type Update struct {
	Check     bool   `toml:"check"`
	FeedURL   string `toml:"feed_url"`
	PublicKey string `toml:"public_key"` // base64 ed25519
}

// Tray holds the tray application's own settings.
type Tray struct {
	Autostart bool `toml:"autostart"`
	HTTPPort  int  `toml:"http_port"` // 0: the tray runs no HTTP server
}

// HTTP configures the streamable HTTP transport (serve --http).
type HTTP struct {
	// AllowedOrigins are the browser origins ("http://127.0.0.1:6274")
	// whose requests the transport serves, with CORS headers; a request
	// with any other Origin header is refused. Empty: none.
	AllowedOrigins []string `toml:"allowed_origins"`
}

// Default returns the configuration used when there is no file.
func Default() *Config {
	return &Config{
		Kubernetes: Kubernetes{UseAgentSandbox: "auto", WarmPool: map[string]int{}},
		Images: Images{
			Python:     "python:3.12-slim-bookworm",
			JavaScript: "node:22-bookworm-slim",
			Bash:       "debian:bookworm-slim",
			Pull:       "missing",
			Allowed:    []string{},
		},
		Languages: map[string]Language{},
		Limits: Limits{
			MemoryMB:              512,
			CPUs:                  1.0,
			Pids:                  256,
			WorkspaceMB:           512,
			ExecTimeoutSeconds:    60,
			MaxExecTimeoutSeconds: 600,
			OutputBytes:           16384,
			OutputFileBytes:       8 << 20,
			ImageBytes:            4 << 20,
			IdleTTLMinutes:        30,
			MaxSandboxes:          10,
		},
		Network: Network{Default: "none", AllowDomains: []string{}, Ask: true, MaxConnections: 64, Install: true},
		Files: Files{
			ReadRoots: []string{"~"},
			ReadDeny:  DefaultReadDeny(),
			WriteRoot: "~/Downloads/mcp-sandbox",
			WriteDeny: DefaultWriteDeny(),
			MaxCopyMB: 100,
		},
		Pool: Pool{Size: 1, Languages: []string{"python"}, MaxSize: 8, IdleSeconds: 60},
		HTTP: HTTP{AllowedOrigins: []string{}},
	}
}

// Builtin languages: how each runs a file and which resident runner serves it.
var builtin = map[string]Language{
	"python":     {Run: []string{"python3", "-u", "{file}"}, Extension: ".py", Runner: "python"},
	"javascript": {Run: []string{"node", "{file}"}, Extension: ".js", Runner: "node"},
	"bash":       {Run: []string{"bash", "{file}"}, Extension: ".sh", Runner: "shell"},
}

// ImageKey is the config key that chooses language's image: "images.python"
// for a built-in language whose [languages.NAME] does not name one, else
// "languages.NAME.image".
func (c *Config) ImageKey(language string) string {
	table, key := c.ImageSetting(language)
	return table + "." + key
}

// ImageSetting is ImageKey as a person writes it in the file: the table
// and the key in it.
func (c *Config) ImageSetting(language string) (table, key string) {
	name := strings.ToLower(strings.TrimSpace(language))
	if _, ok := builtin[name]; ok && c.Languages[name].Image == "" {
		return "images", name
	}
	return "languages." + name, "image"
}

// Language returns the resolved definition of a language (built-in or from
// [languages.NAME]) and whether it exists.
func (c *Config) Language(name string) (Language, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "js" || name == "node" {
		name = "javascript"
	}
	if name == "sh" || name == "shell" {
		name = "bash"
	}
	l, isBuiltin := builtin[name]
	switch name {
	case "python":
		l.Image = c.Images.Python
	case "javascript":
		l.Image = c.Images.JavaScript
	case "bash":
		l.Image = c.Images.Bash
	}
	extra, ok := c.Languages[name]
	if !ok && !isBuiltin {
		return Language{}, false
	}
	if extra.Image != "" {
		l.Image = extra.Image
	}
	if len(extra.Run) > 0 {
		l.Run = extra.Run
	}
	if extra.Extension != "" {
		l.Extension = extra.Extension
	}
	if extra.Runner != "" {
		l.Runner = extra.Runner
	}
	return l, true
}

// LanguageNames lists every language, built-in first, then the configured
// ones in alphabetical order.
func (c *Config) LanguageNames() []string {
	names := []string{"python", "javascript", "bash"}
	var extra []string
	for n := range c.Languages {
		if !slices.Contains(names, n) {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

// LanguageOfImage returns a language whose image is image, if any.
func (c *Config) LanguageOfImage(image string) (string, bool) {
	for _, n := range c.LanguageNames() {
		if l, _ := c.Language(n); l.Image == image {
			return n, true
		}
	}
	return "", false
}

// ImageAllowed reports whether a tool call may ask for image: the language
// images always are; others only when they match a pattern in
// images.allowed ("*" matches any run of characters, e.g. "python:*" or
// "ghcr.io/me/*").
func (c *Config) ImageAllowed(image string) bool {
	if _, ok := c.LanguageOfImage(image); ok {
		return true
	}
	for _, p := range c.Images.Allowed {
		if globMatch(p, image) {
			return true
		}
	}
	return false
}

// globMatch matches s against a pattern where '*' stands for any run of
// characters (including '/' and ':'); everything else matches literally.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		idx := strings.Index(s, parts[i])
		if idx < 0 {
			return false
		}
		s = s[idx+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

func (c *Config) String() string {
	return fmt.Sprintf("config(%s)", c.Source)
}

// File names the file c was read from, for messages that tell a person
// what to edit: its path, or the path it would have while it does not
// exist yet.
func (c *Config) File() string {
	if c.Source != "" {
		return c.Source
	}
	return Path()
}
