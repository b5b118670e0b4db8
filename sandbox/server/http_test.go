package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

func TestCheckHTTPAddr(t *testing.T) {
	const (
		ok     = ""
		remote = "remote"
		syntax = "syntax"
	)
	for _, tc := range []struct {
		name        string
		addr        string
		allowRemote bool
		wantRemote  bool
		refused     string // ok, or why it is refused
	}{
		{"IPv4 loopback", "127.0.0.1:8765", false, false, ok},
		{"other 127/8 address", "127.0.0.2:0", false, false, ok},
		{"IPv6 loopback", "[::1]:0", false, false, ok},
		{"localhost", "localhost:0", false, false, ok},
		{"LOCALHOST", "LOCALHOST:0", false, false, ok},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]:0", false, false, ok},
		{"all interfaces", "0.0.0.0:0", false, true, remote},
		{"all IPv6 interfaces", "[::]:0", false, true, remote},
		{"empty host", ":8765", false, true, remote},
		{"LAN address", "192.168.1.5:8765", false, true, remote},
		{"host name", "my-laptop.local:8765", false, true, remote},
		{"name that starts with localhost", "localhost.example.com:0", false, true, remote},
		{"all interfaces, allowed", "0.0.0.0:0", true, true, ok},
		{"LAN address, allowed", "192.168.1.5:8765", true, true, ok},
		{"loopback with --allow-remote", "127.0.0.1:0", true, false, ok},
		{"no port", "127.0.0.1", false, false, syntax},
		{"port out of range", "127.0.0.1:65536", false, false, syntax},
		{"port by name", "127.0.0.1:http", false, false, syntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isRemote, err := CheckHTTPAddr(tc.addr, tc.allowRemote)
			got := ok
			if errors.Is(err, ErrRemoteAddr) {
				got = remote
			} else if err != nil {
				got = syntax
			}
			if got != tc.refused {
				t.Fatalf("refused = %q, want %q (err: %v)", got, tc.refused, err)
			}
			if isRemote != tc.wantRemote {
				t.Errorf("remote = %v, want %v", isRemote, tc.wantRemote)
			}
		})
	}
}

func TestHTTPToken(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name, env  string
		wantSource string
		wantFile   bool
	}{
		{"from the environment", "  from-env-0123456789abcdef0123456789  ", "MCP_SANDBOX_TOKEN", false},
		{"generated and stored", "", "stored in ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := state.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string {
				if k == "MCP_SANDBOX_TOKEN" {
					return tc.env
				}
				return ""
			}
			tok, source, err := httpToken(getenv, log, st)
			if err != nil {
				t.Fatal(err)
			}
			if tc.env != "" && tok != "from-env-0123456789abcdef0123456789" {
				t.Errorf("token %q, want the trimmed environment value", tok)
			}
			if len(source) < len(tc.wantSource) || source[:len(tc.wantSource)] != tc.wantSource {
				t.Errorf("source %q, want %q…", source, tc.wantSource)
			}
			_, statErr := os.Stat(filepath.Join(st.Dir(), "http-token"))
			if got := statErr == nil; got != tc.wantFile {
				t.Errorf("token file exists = %v, want %v", got, tc.wantFile)
			}
			again, _, err := httpToken(getenv, log, st)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tok, again); diff != "" {
				t.Errorf("second call gave another token (-first +second):\n%s", diff)
			}
		})
	}
}

// A taken port is the first and only thing Run says: before any engine
// work starts (no false "Docker is not reachable" from a start-up cut
// short), naming the tray's HTTP server when the config gives it that port.
func TestRunOnTakenPort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"another program", "", []string{"--http " + addr + ": the port is taken by another program; choose another port"}},
		{"the tray's", "[tray]\nhttp_port = " + port + "\n", []string{"the tray's HTTP server uses it: [tray] http_port = " + port}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(p, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			w, err := config.NewWatcher(p, time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			var logs strings.Builder
			// No backend, no state: Run must not get as far as needing them.
			err = Run(context.Background(), Options{Config: w, HTTPAddr: addr, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Run = %v, want %q", err, want)
				}
			}
			if logs.Len() != 0 {
				t.Errorf("Run logged before it refused:\n%s", logs.String())
			}
		})
	}
}
