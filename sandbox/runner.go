package sandbox

// residentRunner is a long-lived interpreter inside a sandbox that run_code
// talks to instead of starting a process per call.
type residentRunner interface {
	close()
}
