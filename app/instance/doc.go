// Package instance keeps the tray to one instance per user: the first
// launch holds a lock in the state directory and listens on the
// platform's local endpoint (a unix socket next to the lock on Linux and
// macOS, a named pipe on Windows; see endpoint); a second launch finds the
// lock taken, asks the first to bring its window forward, and exits.
//
// The protocol is the same on every system: the second launch sends the
// line "show", the first calls its show function and answers "ok".
//
//	inst, err := instance.Acquire(stateDir)
//	if errors.Is(err, instance.ErrRunning) {
//		return nil // the running tray shows its window
//	}
//	go inst.Serve(ctx, showWindow)
//	defer inst.Close()
//
// Imports: none
package instance
