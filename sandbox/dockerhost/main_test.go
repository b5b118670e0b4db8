package dockerhost

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for ssh: run with
// DOCKERHOST_FAKE_SSH set, it acts as "ssh … docker system dial-stdio"
// instead of running the tests.
func TestMain(m *testing.M) {
	if target := os.Getenv("DOCKERHOST_FAKE_SSH"); target != "" {
		os.Exit(fakeSSH(target))
	}
	os.Exit(m.Run())
}

// fakeSSH records its arguments, then joins stdin and stdout to the unix
// socket target, as "docker system dial-stdio" on the far side does. A
// target of "fail" plays an unreachable host.
func fakeSSH(target string) int {
	if f := os.Getenv("DOCKERHOST_FAKE_SSH_ARGS"); f != "" {
		if err := os.WriteFile(f, []byte(strings.Join(os.Args[1:], "\n")), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if target == "fail" {
		fmt.Fprintln(os.Stderr, "ssh: connect to host build-box port 2222: Connection refused")
		return 255
	}
	c, err := net.Dial("unix", target)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		io.Copy(c, os.Stdin)
		c.(*net.UnixConn).CloseWrite()
	}()
	io.Copy(os.Stdout, c)
	return 0
}
