package dockerhost

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// tlsFilesIn returns the TLS material found in dir (ca.pem, cert.pem,
// key.pem), leaving out the files that do not exist, as the docker CLI does.
// It returns nil when dir holds none of them.
func tlsFilesIn(dir string) *TLSFiles {
	have := func(name string) string {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	t := &TLSFiles{CA: have("ca.pem"), Cert: have("cert.pem"), Key: have("key.pem")}
	if *t == (TLSFiles{}) {
		return nil
	}
	return t
}

// config builds the client's TLS configuration from the files.
func (t *TLSFiles) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.SkipVerify}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("read tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("read tls ca %s: %w", t.CA, errNoCertificates)
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.Cert != "" && t.Key != "":
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("load tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.Cert != "" || t.Key != "":
		return nil, fmt.Errorf("load tls client certificate: %w", errHalfPair)
	}
	return cfg, nil
}

var (
	errNoCertificates = errors.New("no pem certificates found")
	errHalfPair       = errors.New("cert.pem and key.pem must both be present")
)
