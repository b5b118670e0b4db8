package sandbox

import (
	"fmt"
	"regexp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// What an engine says when it refuses a sandbox's CPU or memory limit at
// create time: Docker and Podman check cpus against the host's cores and
// memory against their minimum. The sentence is quoted back, since it
// holds the engine's range.
var (
	cpusRefused   = regexp.MustCompile(`(?i)range of cpus is from [0-9.]+ to [0-9.]+[^:;"]*`)
	memoryRefused = regexp.MustCompile(`(?i)minimum memory limit (allowed )?(is|should be|can not be less than) [0-9.]+ ?[kmg]?i?b?`)
)

// limitRefused turns an engine's refusal of a sandbox's CPU or memory
// limit into an error naming the setting that chose it (the tool argument,
// else the config key and file) and the engine's range; other errors pass
// through. The engine's sentence is quoted whole; the rest of its error
// (the API call, "Error response from daemon") tells nothing more.
func limitRefused(cfg *config.Config, req CreateRequest, lim Limits, err error) error {
	if m := cpusRefused.FindString(err.Error()); m != "" {
		return fmt.Errorf("%w: cpus %g is more than this engine allows (%q): %s",
			ErrInvalid, lim.CPUs, m, setLimit(cfg, "cpus", req.CPUs != 0))
	}
	if m := memoryRefused.FindString(err.Error()); m != "" {
		return fmt.Errorf("%w: memory_mb %d is less than this engine allows (%q): %s",
			ErrInvalid, lim.MemoryMB, m, setLimit(cfg, "memory_mb", req.MemoryMB != 0))
	}
	return err
}

// setLimit says how to change the limit arg: the call's own argument when
// it passed one, else limits.<arg> in the config file.
func setLimit(cfg *config.Config, arg string, passed bool) string {
	fix := fmt.Sprintf("set limits.%s in %s within that range (%s)", arg, cfg.File(), appliesSoon)
	if passed {
		return fmt.Sprintf("pass %s within that range (its default is limits.%s in %s)", arg, arg, cfg.File())
	}
	return fix
}
