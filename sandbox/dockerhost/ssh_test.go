//go:build !windows

package dockerhost

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSSHArgs(t *testing.T) {
	base := []string{"-o", "ConnectTimeout=30", "-o", "BatchMode=yes", "-T"}
	tests := []struct {
		host    string
		want    []string
		wantErr bool
	}{
		{host: "ssh://build-box", want: append(base[:len(base):len(base)], "--", "build-box", "docker", "system", "dial-stdio")},
		{host: "ssh://me@build-box", want: append(base[:len(base):len(base)], "-l", "me", "--", "build-box", "docker", "system", "dial-stdio")},
		{host: "ssh://me@build-box:2222", want: append(base[:len(base):len(base)], "-l", "me", "-p", "2222", "--", "build-box", "docker", "system", "dial-stdio")},
		{host: "ssh://me@[2001:db8::1]:2222", want: append(base[:len(base):len(base)], "-l", "me", "-p", "2222", "--", "2001:db8::1", "docker", "system", "dial-stdio")},
		{
			host: "ssh://me@build-box/run/user/1000/docker.sock",
			want: append(base[:len(base):len(base)], "-l", "me", "--", "build-box", "docker", "--host=unix:///run/user/1000/docker.sock", "system", "dial-stdio"),
		},
		{
			host: "ssh://build-box/home/me/my%20engine/docker.sock",
			want: append(base[:len(base):len(base)], "--", "build-box", "docker", "'--host=unix:///home/me/my engine/docker.sock'", "system", "dial-stdio"),
		},
		{host: "ssh://build-box/", want: append(base[:len(base):len(base)], "--", "build-box", "docker", "system", "dial-stdio")},
		{host: "ssh://-oProxyCommand=evil", want: append(base[:len(base):len(base)], "--", "-oProxyCommand=evil", "docker", "system", "dial-stdio")},
		{host: "ssh://me:secret@build-box", wantErr: true},
		{host: "ssh://", wantErr: true},
		{host: "ssh://build-box?x=1", wantErr: true},
		{host: "tcp://build-box", wantErr: true},
	}
	for _, tt := range tests {
		got, err := sshArgs(tt.host)
		if tt.wantErr {
			if !errors.Is(err, errSSHURL) {
				t.Errorf("sshArgs(%q) error = %v, want errSSHURL", tt.host, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("sshArgs(%q): %v", tt.host, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("sshArgs(%q) (-want +got):\n%s", tt.host, diff)
		}
	}
}

// fakeSSHOnPath puts an "ssh" first on PATH that runs this test binary as
// fakeSSH, joined to target, and returns the file its arguments go to.
func fakeSSHOnPath(t *testing.T, target string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nexec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := filepath.Join(bin, "args")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DOCKERHOST_FAKE_SSH", target)
	t.Setenv("DOCKERHOST_FAKE_SSH_ARGS", args)
	return args
}

func TestSSHEndpoint(t *testing.T) {
	t.Run("answers", func(t *testing.T) {
		w := newWorld(t)
		sock := filepath.Join(w.dir, "remote.sock")
		serveFake(t, sock, fakeColima)
		argsFile := fakeSSHOnPath(t, sock)
		w.env["DOCKER_HOST"] = "ssh://me@build-box:2222"

		r := w.detect()
		c := r.Candidates[0]
		if !c.OK || c.Engine != EngineColima || r.Chosen != &r.Candidates[0] {
			t.Fatalf("ssh endpoint: %+v; reason %s", c, r.Reason)
		}
		b, err := os.ReadFile(argsFile)
		if err != nil {
			t.Fatal(err)
		}
		want := "-o\nConnectTimeout=30\n-o\nBatchMode=yes\n-T\n-l\nme\n-p\n2222\n--\nbuild-box\ndocker\nsystem\ndial-stdio"
		if diff := cmp.Diff(want, string(b)); diff != "" {
			t.Errorf("ssh arguments (-want +got):\n%s", diff)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		w := newWorld(t)
		fakeSSHOnPath(t, "fail")
		w.env["DOCKER_HOST"] = "ssh://me@build-box:2222"
		r := w.detect()
		c := r.Candidates[0]
		if c.OK || !strings.Contains(c.Error, "ssh: connect to host build-box port 2222: Connection refused") {
			t.Errorf("unreachable ssh endpoint: ok=%v error=%q", c.OK, c.Error)
		}
	})
}

func TestCommandConn(t *testing.T) {
	t.Run("echo", func(t *testing.T) {
		c, err := dialCommand(context.Background(), "cat")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("read %q, %v", buf, err)
		}
		start := time.Now()
		c.Close()
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("close took %s", took)
		}
		if cc := c.(*cmdConn); cc.cmd.ProcessState == nil {
			t.Errorf("command still running after Close")
		}
	})
	t.Run("stderr", func(t *testing.T) {
		c, err := dialCommand(context.Background(), "sh", "-c", "echo no route to host >&2; exit 3")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Read(make([]byte, 10))
		if err == nil || !strings.Contains(err.Error(), "no route to host") || !strings.Contains(err.Error(), "exit status 3") {
			t.Errorf("read error = %v", err)
		}
	})
	t.Run("missing program", func(t *testing.T) {
		if _, err := dialCommand(context.Background(), "/nonexistent/ssh"); err == nil {
			t.Error("dial of a missing program worked")
		}
	})
}
