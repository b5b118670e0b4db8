package dockerhost

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplicitTLS checks which TLS material is picked up for tcp://
// endpoints; nothing listens, so only the reading is tested here (the real
// handshake is in TestDockerdTLS).
func TestExplicitTLS(t *testing.T) {
	pki := newTestPKI(t)
	tests := []struct {
		name     string
		env      map[string]string
		setup    func(t *testing.T, w *world)
		wantHost string
		wantTLS  *TLSFiles // paths relative to $T
	}{
		{
			name: "DOCKER_TLS_VERIFY with DOCKER_CERT_PATH",
			env:  map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:1", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "$T/certs"},
			setup: func(t *testing.T, w *world) {
				pki.copyTo(t, filepath.Join(w.dir, "certs"), "ca.pem", "cert.pem", "key.pem")
			},
			wantHost: "tcp://127.0.0.1:1",
			wantTLS:  &TLSFiles{CA: "$T/certs/ca.pem", Cert: "$T/certs/cert.pem", Key: "$T/certs/key.pem"},
		},
		{
			name: "DOCKER_TLS_VERIFY defaults to the config directory and port 2376",
			env:  map[string]string{"DOCKER_HOST": "tcp://127.0.0.1", "DOCKER_TLS_VERIFY": "1"},
			setup: func(t *testing.T, w *world) {
				pki.copyTo(t, filepath.Join(w.home, ".docker"), "ca.pem", "cert.pem", "key.pem")
			},
			wantHost: "tcp://127.0.0.1:2376",
			wantTLS:  &TLSFiles{CA: "$T/home/.docker/ca.pem", Cert: "$T/home/.docker/cert.pem", Key: "$T/home/.docker/key.pem"},
		},
		{
			name:     "missing files are left out",
			env:      map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:1", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "$T/certs"},
			setup:    func(t *testing.T, w *world) { pki.copyTo(t, filepath.Join(w.dir, "certs"), "ca.pem") },
			wantHost: "tcp://127.0.0.1:1",
			wantTLS:  &TLSFiles{CA: "$T/certs/ca.pem"},
		},
		{
			name:     "DOCKER_TLS without verification",
			env:      map[string]string{"DOCKER_HOST": "127.0.0.1:1", "DOCKER_TLS": "1"},
			wantHost: "tcp://127.0.0.1:1",
			wantTLS:  &TLSFiles{SkipVerify: true},
		},
		{
			name:     "DOCKER_CERT_PATH alone is not TLS",
			env:      map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:1", "DOCKER_CERT_PATH": "$T/certs"},
			setup:    func(t *testing.T, w *world) { pki.copyTo(t, filepath.Join(w.dir, "certs"), "ca.pem") },
			wantHost: "tcp://127.0.0.1:1",
		},
		{
			name: "context with TLS material",
			env:  map[string]string{"DOCKER_CONTEXT": "remote"},
			setup: func(t *testing.T, w *world) {
				writeContext(t, filepath.Join(w.home, ".docker"), "remote", "tcp://127.0.0.1:1", true, pki, "ca.pem", "cert.pem", "key.pem")
			},
			wantHost: "tcp://127.0.0.1:1",
			wantTLS: &TLSFiles{
				CA:         "$T/home/.docker/contexts/tls/" + contextDir("remote") + "/docker/ca.pem",
				Cert:       "$T/home/.docker/contexts/tls/" + contextDir("remote") + "/docker/cert.pem",
				Key:        "$T/home/.docker/contexts/tls/" + contextDir("remote") + "/docker/key.pem",
				SkipVerify: true,
			},
		},
		{
			name: "context without TLS material",
			env:  map[string]string{"DOCKER_CONTEXT": "plain"},
			setup: func(t *testing.T, w *world) {
				writeContext(t, filepath.Join(w.home, ".docker"), "plain", "tcp://127.0.0.1:1", false, nil)
			},
			wantHost: "tcp://127.0.0.1:1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for k, v := range tt.env {
				w.env[k] = strings.ReplaceAll(v, "$T", w.dir)
			}
			if tt.setup != nil {
				tt.setup(t, w)
			}
			r := w.detect()
			c := r.Candidates[0]
			if c.Host != tt.wantHost {
				t.Errorf("host %q, want %q", c.Host, tt.wantHost)
			}
			var got *TLSFiles
			if c.TLS != nil {
				got = &TLSFiles{
					CA: strings.ReplaceAll(c.TLS.CA, w.dir, "$T"), Cert: strings.ReplaceAll(c.TLS.Cert, w.dir, "$T"),
					Key: strings.ReplaceAll(c.TLS.Key, w.dir, "$T"), SkipVerify: c.TLS.SkipVerify,
				}
			}
			if diff := cmp.Diff(tt.wantTLS, got); diff != "" {
				t.Errorf("tls (-want +got):\n%s", diff)
			}
			if c.OK || !strings.HasPrefix(c.Error, "did not answer: ") {
				t.Errorf("nothing listens at %s, yet ok=%v error=%q", c.Host, c.OK, c.Error)
			}
		})
	}
}
