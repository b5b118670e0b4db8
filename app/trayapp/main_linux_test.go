package trayapp

import (
	"flag"
	"net"
	"os"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
)

// The tests run the real mcp-sandbox-tray and mcp-sandbox-window binaries
// as separate processes, each on a private Xvfb and D-Bus (see
// process_linux_test.go); TestMain only cleans up the built binaries.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	apptest.Cleanup()
	os.Exit(code)
}

// skipUnderRace skips a test in the -race run of this package:
// fyne.io/systray's menu has a data race of its own (see
// race_on_linux_test.go); `go test -p 1 ./app/trayapp` runs these.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("skipping under -race: fyne.io/systray's menu has a data race of its own (see race_on_linux_test.go); `go test -p 1 ./app/trayapp` runs this")
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
