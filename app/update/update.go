package update

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"golang.org/x/mod/semver"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// DefaultFeedURL is where official builds look for releases when the
// config names no feed: the feed attached to the newest GitHub release.
const DefaultFeedURL = "https://github.com/mcp-sandbox/mcp-sandbox/releases/latest/download/feed.json"

// DefaultPublicKey is the release key (base64 ed25519) used when the config
// names none. Official builds set it with
// -ldflags "-X github.com/mcp-sandbox/mcp-sandbox/app/update.DefaultPublicKey=…";
// a build without it checks only when the config has a key.
var DefaultPublicKey = ""

// Errors that callers (and tests) tell apart with errors.Is.
var (
	ErrDisabled   = errors.New("update check is off")
	ErrKey        = errors.New("no usable release public key")
	ErrInsecure   = errors.New("refusing an insecure URL")
	ErrFetch      = errors.New("cannot fetch")
	ErrFeed       = errors.New("malformed release feed")
	ErrVersion    = errors.New("not a semantic version")
	ErrNoArtifact = errors.New("the release has no file for this system")
	ErrSignature  = errors.New("release signature does not verify")
	ErrChecksum   = errors.New("downloaded file does not match the release")
)

// Options says where to look and what the running build is.
type Options struct {
	// FeedURL is the release feed's address.
	FeedURL string
	// PublicKey is the release key, base64 of 32 bytes of ed25519.
	PublicKey string
	// Current is the running version; "" means buildinfo.Version.
	Current string
	// OS and Arch select the artifact; "" means this system.
	OS, Arch string
	// Kinds lists the acceptable kinds of artifact, best first ("deb",
	// "tar.xz", "setup.exe", "dmg"); nil means the usual one for OS.
	Kinds []string
	// Prereleases offers pre-releases (1.3.0-rc.1) to a build that is not
	// itself one.
	Prereleases bool
	// Client makes the requests; nil means a client with sane timeouts.
	Client *http.Client
}

// Release is a newer version that Check found, with the file to install it
// from. Its signature has been verified against Options.PublicKey.
type Release struct {
	Version   string    // as in the feed, without a leading "v"
	NotesURL  string    // the release notes, for a "What's new" link
	Published time.Time // zero when the feed does not say
	Artifact  Artifact  // the file for this system; URL made absolute
}

// FromConfig returns the options for the tray's configured update check,
// or ErrDisabled when the check is off. An empty feed_url means
// DefaultFeedURL; an empty public_key means DefaultPublicKey.
func FromConfig(u config.Update) (Options, error) {
	if !u.Check {
		return Options{}, ErrDisabled
	}
	o := Options{FeedURL: u.FeedURL, PublicKey: u.PublicKey, Kinds: installedKinds(runtime.GOOS)}
	if o.FeedURL == "" {
		o.FeedURL = DefaultFeedURL
	}
	if o.PublicKey == "" {
		o.PublicKey = DefaultPublicKey
	}
	if _, err := ParsePublicKey(o.PublicKey); err != nil {
		return Options{}, err
	}
	return o, nil
}

// Check fetches the feed and returns the release it offers when that is
// newer than the running version and its file for this system carries a
// valid signature. It returns nil and no error when the running version is
// current (or newer). It downloads only the feed, capped at 1 MiB.
func Check(ctx context.Context, o Options) (*Release, error) {
	o = o.withDefaults()
	pub, err := ParsePublicKey(o.PublicKey)
	if err != nil {
		return nil, err
	}
	feedURL, err := checkURL(o.FeedURL, nil)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := fetchSmall(fctx, o.Client, feedURL.String(), maxFeedBytes)
	if err != nil {
		return nil, err
	}
	f, err := ParseFeed(body)
	if err != nil {
		return nil, err
	}
	newer, err := offers(f.Version, o.Current, o.Prereleases)
	if err != nil || !newer {
		return nil, err
	}
	a, err := f.pick(o.OS, o.Arch, o.Kinds)
	if err != nil {
		return nil, err
	}
	if err := verifyArtifact(pub, f.Version, &a); err != nil {
		return nil, err
	}
	u, err := checkURL(a.URL, feedURL)
	if err != nil {
		return nil, err
	}
	a.URL = u.String()
	return &Release{Version: f.Version, NotesURL: f.NotesURL, Published: f.Published, Artifact: a}, nil
}

// offers reports whether feed is a version to offer to a build at current.
func offers(feed, current string, prereleases bool) (bool, error) {
	fv, err := parseVersion(feed)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrFeed, err) // ParseFeed checked it already
	}
	cv, err := parseVersion(current)
	if err != nil {
		return false, fmt.Errorf("running version: %w", err)
	}
	if semver.Prerelease(fv) != "" && semver.Prerelease(cv) == "" && !prereleases {
		return false, nil
	}
	return semver.Compare(fv, cv) > 0, nil
}

func (o Options) withDefaults() Options {
	if o.Current == "" {
		o.Current = buildinfo.Version
	}
	if o.OS == "" {
		o.OS = runtime.GOOS
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	if o.Kinds == nil {
		o.Kinds = defaultKinds(o.OS)
	}
	if o.Client == nil {
		o.Client = newClient()
	}
	return o
}
