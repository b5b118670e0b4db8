package dockerhost

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files the way dockerd and the docker CLI
// expect them.
type testPKI struct {
	dir                   string
	ca, cert, key         string // client side: ca.pem, cert.pem, key.pem
	serverCert, serverKey string
	otherCA               string // a CA that signed none of them
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert, caDER := makeCA(t, "mcp-sandbox test CA")
	_, _, otherDER := makeCA(t, "unrelated CA")
	serverDER, serverKey := makeLeaf(t, caCert, caKey, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	clientDER, clientKey := makeLeaf(t, caCert, caKey, "client", x509.ExtKeyUsageClientAuth)

	p := &testPKI{dir: dir}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.ca = write("ca.pem", "CERTIFICATE", caDER)
	p.cert = write("cert.pem", "CERTIFICATE", clientDER)
	p.key = write("key.pem", "PRIVATE KEY", clientKey)
	p.serverCert = write("server-cert.pem", "CERTIFICATE", serverDER)
	p.serverKey = write("server-key.pem", "PRIVATE KEY", serverKey)
	p.otherCA = write("other-ca.pem", "CERTIFICATE", otherDER)
	return p
}

// copyTo copies the client's files (those named in names, of ca.pem,
// cert.pem and key.pem) into dir.
func (p *testPKI) copyTo(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(p.dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func makeCA(t *testing.T, name string) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

// makeLeaf returns a certificate signed by the CA, and its PKCS #8 key.
func makeLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, usage x509.ExtKeyUsage) (der, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err = x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}
