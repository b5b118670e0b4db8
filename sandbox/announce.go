package sandbox

import (
	"os"
	"slices"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// maxAnnouncedClients bounds the client names a server lists of itself
// (an HTTP server serves any number of sessions).
const maxAnnouncedClients = 16

// Announce says in the state directory, beside this server's lock, that
// the server runs, with its transport ("stdio", "http") and version: the
// window lists the servers running now from these files
// (state.RunningServers). The file goes with the lock when the server
// stops or is proved gone. Without a lock (no state directory, or the lock
// could not be taken) nothing is written.
func (e *Engine) Announce(transport, version string) error {
	e.infoMu.Lock()
	defer e.infoMu.Unlock()
	if e.lock == nil || e.infoDone {
		return nil
	}
	e.info = state.ServerInfo{Owner: e.owner, PID: os.Getpid(), StartedAt: time.Now().UTC().Truncate(time.Second),
		Transport: transport, Version: version, Clients: e.info.Clients}
	e.announced = true
	return e.st.WriteServerInfo(e.info)
}

// AnnounceClient adds a client, by the name it gave itself (cleaned), to
// what the server says of itself, once Announce has said it runs.
func (e *Engine) AnnounceClient(name string) {
	name = printable.Clean(name, printable.NameMax)
	if name == "" {
		return
	}
	e.infoMu.Lock()
	defer e.infoMu.Unlock()
	if slices.Contains(e.info.Clients, name) || len(e.info.Clients) >= maxAnnouncedClients {
		return
	}
	e.info.Clients = append(e.info.Clients, name)
	if e.announced && e.lock != nil {
		if err := e.st.WriteServerInfo(e.info); err != nil {
			e.log.Warn("write this server's info file", "err", err)
		}
	}
}
