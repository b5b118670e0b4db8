package mcpserver_test

import (
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"
)

// TestServeOneP: over stdio the built server runs Go code on one P (its
// scheduler's trace says gomaxprocs=1 once it serves; app/cli/serve.go
// says why) unless $GOMAXPROCS names another count, which wins.
func TestServeOneP(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the count is 1 either way")
	}
	trace := regexp.MustCompile(`gomaxprocs=(\d+)`)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"default", nil, "1"},
		{"GOMAXPROCS=2", []string{"GOMAXPROCS=2"}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(serverEnv(t, ""), "DOCKER_HOST=unix://"+filepath.Join(t.TempDir(), "none.sock"), "GODEBUG=schedtrace=20")
			p := startServer(t, append(env, tc.env...))
			sess := sdkClient(t, p, nil)
			call(t, sess, "sandbox_list", nil)
			var last string
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				m := trace.FindAllStringSubmatch(p.stderr.String(), -1)
				if len(m) > 0 {
					last = m[len(m)-1][1]
				}
				if last == tc.want {
					return
				}
			}
			t.Errorf("the scheduler's trace says gomaxprocs=%s while serving, want %s", last, tc.want)
		})
	}
}
