//go:build cgo

package windowapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// healthCacheFile keeps the last health check in the state directory, so
// a window opened again does not start the interpreter probes (throwaway
// containers) again while nothing they depend on changed.
const healthCacheFile = "window-health.json"

// healthCacheAge is how long a result is reused: a clean one for an hour;
// one with problems for a minute (a registry may answer again).
const (
	healthCacheOK      = time.Hour
	healthCacheProblem = time.Minute
)

type healthCache struct {
	Key    string         `json:"key"`
	At     time.Time      `json:"at"`
	Engine *health.Engine `json:"engine"`
}

// healthKey names what a check depends on: the engine, the languages'
// images (by their ids on the engine, so a pull or a rebuild changes it),
// the pull policy and the limits.
func healthKey(ctx context.Context, cli *client.Client, cfg *config.Config) string {
	h := sha256.New()
	fmt.Fprintln(h, cli.DaemonHost(), cfg.Images.Pull, cfg.Limits.CPUs, cfg.Limits.MemoryMB)
	for _, name := range cfg.LanguageNames() {
		l, _ := cfg.Language(name)
		id := ""
		if ins, err := cli.ImageInspect(ctx, l.Image); err == nil {
			id = ins.ID
		}
		fmt.Fprintln(h, name, l.Image, l.Run, id)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cachedHealth returns the kept result for key when it is fresh.
func (a *App) cachedHealth(key string) *health.Engine {
	b, err := os.ReadFile(filepath.Join(a.st.Dir(), healthCacheFile))
	if err != nil {
		return nil
	}
	var c healthCache
	if json.Unmarshal(b, &c) != nil || c.Key != key || c.Engine == nil {
		return nil
	}
	age := healthCacheOK
	if len(c.Engine.Problems) > 0 {
		age = healthCacheProblem
	}
	if time.Since(c.At) > age {
		return nil
	}
	return c.Engine
}

// keepHealth writes the result for key.
func (a *App) keepHealth(key string, h *health.Engine) {
	b, err := json.Marshal(healthCache{Key: key, At: time.Now(), Engine: h})
	if err != nil {
		return
	}
	p := filepath.Join(a.st.Dir(), healthCacheFile)
	if err := os.WriteFile(p+".tmp", b, 0o600); err == nil {
		_ = os.Rename(p+".tmp", p)
	}
}
