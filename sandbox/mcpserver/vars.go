package mcpserver

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// schemaVars are the values of the config in force that the tools'
// schemas show (their {key}s, see schema.go): the limits as defaults and
// maxima, the languages, images and network modes as enums.
func schemaVars(cfg *config.Config) map[string]string {
	lim := cfg.Limits
	v := map[string]string{
		"languages":   strings.Join(cfg.LanguageNames(), ","),
		"memory_mb":   strconv.Itoa(lim.MemoryMB),
		"cpus":        strconv.FormatFloat(lim.CPUs, 'f', -1, 64),
		"pids":        strconv.Itoa(lim.Pids),
		"ttl_minutes": strconv.Itoa(lim.IdleTTLMinutes),
		"timeout":     strconv.Itoa(lim.ExecTimeoutSeconds),
		"max_timeout": strconv.Itoa(lim.MaxExecTimeoutSeconds),
		"network":     cfg.Network.Default,
		"networks":    sandbox.NetworkNone + "," + sandbox.NetworkAllowlist,
		"ask":         "are refused",
	}
	if cfg.Network.AllowEgress {
		v["networks"] += "," + sandbox.NetworkEgress
	}
	if cfg.Network.Ask {
		v["ask"] = "need the person's yes"
	}
	v["images"], v["image_note"] = imageChoice(cfg)
	return v
}

// imageChoice is the images sandbox_create may take: an enum when the
// list is finite, else a description naming the patterns.
func imageChoice(cfg *config.Config) (enum, note string) {
	var images []string
	for _, n := range cfg.LanguageNames() {
		if l, ok := cfg.Language(n); ok && !slices.Contains(images, l.Image) {
			images = append(images, l.Image)
		}
	}
	for _, p := range cfg.Images.Allowed {
		if strings.Contains(p, "*") {
			return "", "A language's image or one matching " + strings.Join(cfg.Images.Allowed, ", ")
		}
		if !slices.Contains(images, p) {
			images = append(images, p)
		}
	}
	return strings.Join(images, ","), "Instead of the language's"
}
