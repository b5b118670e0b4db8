// Package config reads and watches the one TOML file that the tray and every
// server process share (sandbox/README.md §Configuration lists every key).
//
// A missing file means defaults; an invalid file is an error that names the
// line. Callers hold a *Config value and never mutate it: Load returns a new
// one each time, and a Watcher hands out the newest valid one.
//
//	cfg, err := config.Load(config.Path())
//	if err != nil {
//		return err // "config.toml:12: limits.memory_mb: must be at least 16"
//	}
//	fmt.Println(cfg.Limits.MemoryMB)
//
// Imports: sandbox/atomicfile, sandbox/filebackup, sandbox/netproxy, sandbox/tomlscan
package config
