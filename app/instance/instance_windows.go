package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// pipePrefix starts the name of every tray's pipe; see endpoint.
const pipePrefix = `\\.\pipe\mcp-sandbox-tray-`

// endpoint is a named pipe, Windows' own local endpoint (AF_UNIX sockets
// are missing from older Windows and from Wine). Pipe names are one
// namespace for the whole machine, so the name carries a hash of the state
// directory, which is each user's own: two users, or two state dirs in
// tests, never share a pipe.
func endpoint(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(abs))))
	return pipePrefix + hex.EncodeToString(sum[:8]), nil
}

// listen creates the pipe, open to the current user alone. A pipe cannot
// outlive the process that made it, so there is nothing stale to remove;
// and creating fails when the name is taken (go-winio creates the first
// instance with FILE_CREATE), so another user cannot squat it unnoticed.
func listen(ep string) (net.Listener, error) {
	sid, err := currentUserSID()
	if err != nil {
		return nil, err
	}
	return winio.ListenPipe(ep, &winio.PipeConfig{
		// Protected DACL: generic-all for this user, nobody else.
		SecurityDescriptor: "D:P(A;;GA;;;" + sid + ")",
	})
}

func dial(ep string, timeout time.Duration) (net.Conn, error) {
	return winio.DialPipe(ep, &timeout)
}

func removeEndpoint(string) {}

func currentUserSID() (string, error) {
	tok := windows.GetCurrentProcessToken()
	u, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("the current user's SID: %w", err)
	}
	return u.User.Sid.String(), nil
}
