package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by -ldflags -X at build time.
var (
	Version = "0.0.0-dev"
	Commit  = ""
	Date    = ""
)

// Info is what `mcp-sandbox version --json` prints.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
}

// Get returns the build's information.
func Get() Info {
	i := Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Commit == "" {
					i.Commit = s.Value
				}
			case "vcs.time":
				if i.Date == "" {
					i.Date = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" && i.Commit != "" && len(i.Commit) <= 40 {
					i.Commit += "-dirty"
				}
			}
		}
	}
	// Shorten a full hash, keeping a "-dirty" suffix.
	if hash, suffix, _ := strings.Cut(i.Commit, "-"); len(hash) == 40 {
		i.Commit = hash[:12]
		if suffix != "" {
			i.Commit += "-" + suffix
		}
	}
	return i
}

// String is the one-line form: "mcp-sandbox 1.2.3 (abc1234) linux/amd64".
func (i Info) String() string {
	c := i.Commit
	if c == "" {
		c = "unknown commit"
	}
	return fmt.Sprintf("%s (%s, %s, %s)", i.Version, c, i.Platform, i.GoVersion)
}
