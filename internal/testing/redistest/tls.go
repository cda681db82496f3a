package redistest

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
	"strconv"
	"testing"
	"time"
)

// TLSOptions are what StartTLS serves with.
type TLSOptions struct {
	// Password, if set, is required of every client (requirepass).
	Password string
}

// StartTLS starts a redis-server for t, as Start does, that also serves
// TLS on a loopback TCP port with a certificate of a certificate
// authority made for the test (see CAFile), and requires opts.Password
// when it is set. It is stopped when t ends.
func StartTLS(t testing.TB, opts TLSOptions) *Server {
	t.Helper()
	bin := binary(t)
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{t: t, bin: bin, dir: dir, socket: filepath.Join(dir, "redis.sock"), password: opts.Password}
	s.ca, s.cert, s.key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	if err := writeCertificates(s.ca, s.cert, s.key); err != nil {
		t.Fatal(err)
	}
	// redis-server takes a port number, not a listener: one the kernel
	// just gave out and took back is free unless another process takes
	// it in between, and then the start fails with a message saying so.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.tlsPort = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.Restart()
	t.Cleanup(s.Kill)
	return s
}

// TLSURL returns the server's TLS address as a redis URL
// (rediss://[:password@]127.0.0.1:port/0), or "" for a server started
// without TLS.
func (s *Server) TLSURL() string {
	if s.tlsPort == 0 {
		return ""
	}
	auth := ""
	if s.password != "" {
		auth = ":" + s.password + "@"
	}
	return "rediss://" + auth + "127.0.0.1:" + strconv.Itoa(s.tlsPort) + "/0"
}

// CAFile returns the PEM file of the certificate authority that signed
// the TLS server's certificate, or "" without TLS.
func (s *Server) CAFile() string { return s.ca }

// tlsArgs returns the redis-server arguments of s's TLS and password.
func (s *Server) tlsArgs() []string {
	var args []string
	if s.tlsPort != 0 {
		args = append(args,
			"--tls-port", strconv.Itoa(s.tlsPort),
			"--tls-cert-file", s.cert,
			"--tls-key-file", s.key,
			"--tls-ca-cert-file", s.ca,
			"--tls-auth-clients", "no",
		)
	}
	if s.password != "" {
		args = append(args, "--requirepass", s.password)
	}
	return args
}

// writeCertificates writes a certificate authority (caFile) and a
// certificate it signed for 127.0.0.1 and localhost (certFile, keyFile),
// valid for a day.
func writeCertificates(caFile, certFile, keyFile string) error {
	now := time.Now()
	ca, caKey, caDER, err := issue(&x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	if err != nil {
		return err
	}
	_, key, der, err := issue(&x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}, ca, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{caFile, "CERTIFICATE", caDER}, {certFile, "CERTIFICATE", der}, {keyFile, "EC PRIVATE KEY", keyDER}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// issue makes a key and the certificate of tmpl for it, signed by parent
// with parentKey (self-signed when parent is nil).
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, der, err
}
