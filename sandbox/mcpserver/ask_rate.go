package mcpserver

import (
	"time"
)

// Questions per client: a burst, then one per askEvery, so that one
// client's sandboxes cannot bury the person in questions (a sandbox has
// one open at a time already).
const (
	askBurst        = 10
	askEvery        = 6 * time.Second
	maxRatedClients = 1024
)

// askBucket is one client's questions left and when it was last filled.
type askBucket struct {
	left float64
	at   time.Time
}

// allowQuestion takes one of client's questions, or reports that it has
// asked too many lately.
func (a *Asker) allowQuestion(client string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	b, ok := a.rates[client]
	if !ok {
		if len(a.rates) >= maxRatedClients {
			clear(a.rates)
		}
		b = &askBucket{left: askBurst, at: now}
		a.rates[client] = b
	}
	b.left = min(askBurst, b.left+now.Sub(b.at).Seconds()/askEvery.Seconds())
	b.at = now
	if b.left < 1 {
		return false
	}
	b.left--
	return true
}
