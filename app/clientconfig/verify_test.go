package clientconfig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestVerifyInstalled installs the test binary as the server of a client
// and verifies it the way the client would start it.
func TestVerifyInstalled(t *testing.T) {
	env, home := testEnv(t)
	env.Getenv = mapEnv{"HOME": home, "PATH": os.Getenv("PATH"), "SECRET_TOKEN": "do-not-pass"}.get
	ctx := context.Background()
	if _, err := cursor.Install(ctx, InstallOptions{Env: env, Command: self(t), DockerHost: "tcp://127.0.0.1:2375", Force: true}); err != nil {
		t.Fatal(err)
	}
	res, err := cursor.Verify(ctx, VerifyOptions{Env: env, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if res.Client != "cursor" || res.ServerName != "fake-sandbox" || res.Tools != 1 || res.ProtocolVersion == "" {
		t.Errorf("Verify = %+v, want client cursor, server fake-sandbox, 1 tool and a protocol version", res)
	}
	// The entry's env reaches the server; the rest of ours does not, but
	// PATH (one of the variables clients pass on) does.
	if want := "docker=tcp://127.0.0.1:2375 secret= path=true"; res.ServerVersion != want {
		t.Errorf("server saw %q, want %q", res.ServerVersion, want)
	}
	if res.Startup <= 0 || res.RoundTrip <= 0 {
		t.Errorf("timings = %v, %v; want both positive", res.Startup, res.RoundTrip)
	}
}

func TestVerifyFailures(t *testing.T) {
	exe := self(t)
	notExec := filepath.Join(t.TempDir(), "mcp-sandbox")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		entry   Entry
		timeout time.Duration
		want    error
		say     string // part of the message
	}{
		{
			name:  "missing binary",
			entry: Entry{Command: filepath.Join(t.TempDir(), "no-such-mcp-sandbox"), Args: []string{"serve"}},
			want:  ErrCommandNotFound,
			say:   "does not exist",
		},
		{
			name:  "not executable",
			entry: Entry{Command: notExec, Args: []string{"serve"}},
			want:  ErrCommandNotFound,
			say:   "not an executable",
		},
		{
			name:  "bare name not on PATH",
			entry: Entry{Command: "surely-not-a-command-anywhere", Args: []string{"serve"}},
			want:  ErrCommandNotFound,
			say:   "not on the server's PATH",
		},
		{
			name:  "exits at once",
			entry: Entry{Command: exe, Args: []string{"serve"}, Env: map[string]string{fakeServerMode: "exit"}},
			want:  ErrServerExited,
			say:   "fatal: cannot reach Docker",
		},
		{
			name:  "prints garbage",
			entry: Entry{Command: exe, Args: []string{"serve"}, Env: map[string]string{fakeServerMode: "garbage"}},
			want:  ErrNotMCP,
			say:   "not MCP",
		},
		{
			name:    "never answers",
			entry:   Entry{Command: exe, Args: []string{"serve"}, Env: map[string]string{fakeServerMode: "hang"}},
			timeout: time.Second,
			want:    ErrTimeout,
			say:     "within 1s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			env := Env{Getenv: mapEnv{"PATH": t.TempDir()}.get}
			start := time.Now()
			_, err := VerifyEntry(context.Background(), tt.entry, VerifyOptions{Env: env, Timeout: timeout})
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyEntry error = %v, want %v", err, tt.want)
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), tt.say) {
				t.Errorf("error %q does not say %q", err, tt.say)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestVerifyNotConfigured(t *testing.T) {
	env, _ := testEnv(t)
	_, err := cursor.Verify(context.Background(), VerifyOptions{Env: env})
	if !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("Verify without an entry: %v, want ErrNotConfigured", err)
	}
}

func TestChildEnv(t *testing.T) {
	env := Env{GOOS: "linux", Getenv: mapEnv{
		"HOME": "/home/me", "PATH": "/usr/bin", "SECRET": "x", "SHELL": "() { :; }",
	}.get}
	got := strings.Join(ChildEnv(env, map[string]string{"DOCKER_HOST": "unix:///d.sock", "PATH": "/opt/bin"}), " ")
	if want := "DOCKER_HOST=unix:///d.sock HOME=/home/me PATH=/opt/bin"; got != want {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
	win := Env{GOOS: "windows", Getenv: mapEnv{"USERPROFILE": `C:\Users\me`, "HOME": "/c/Users/me", "SYSTEMROOT": `C:\Windows`}.get}
	got = strings.Join(ChildEnv(win, nil), " ")
	if want := `SYSTEMROOT=C:\Windows USERPROFILE=C:\Users\me`; got != want {
		t.Errorf("childEnv (windows) = %q, want %q", got, want)
	}
}
