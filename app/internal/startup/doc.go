// Package startup is how the tray and the window processes begin and end:
// the flags both take (--debug, --version, --cpuprofile), Main, which runs
// the program until a signal ends it, and Begin, which
// finds the program's own path, opens the state directory, the log file
// and its logger, and takes the program's single-instance lock, so the two
// processes cannot drift apart in where they log or how they lock.
// Releaser hands their free memory back once they are quiet after some
// work (Go's heap, and what memtrim.DropMapped drops: clean code pages start-up
// touched), arming a timer only when told of work, so idle stays asleep.
//
//	p, err := startup.Begin(startup.Options{Name: "window", LockDir: "window",
//		Running: "another window is open; asked it to come forward"})
//	if errors.Is(err, instance.ErrRunning) {
//		return nil // the running one comes forward
//	}
//	if err != nil {
//		return err
//	}
//	defer p.Close()
//	… // start background work owned by wg
//	p.Drain(&wg)
//
// Imports: app/applog, app/instance, sandbox/buildinfo, sandbox/config, sandbox/state
package startup
