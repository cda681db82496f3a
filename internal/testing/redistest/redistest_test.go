package redistest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestStartKillRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Socket(), ""); err != nil {
		t.Fatalf("a started server: %v", err)
	}
	s.Kill()
	if err := ping(s.Socket(), ""); err == nil {
		t.Fatal("a killed server still answers")
	}
	s.Kill() // twice is harmless
	s.Restart()
	if err := ping(s.Socket(), ""); err != nil {
		t.Fatalf("a restarted server: %v", err)
	}
}

// TestStartTLS: the TLS port answers a client that trusts CAFile and
// gives the password, and refuses one that does not give it.
func TestStartTLS(t *testing.T) {
	s := StartTLS(t, TLSOptions{Password: "s3cret"})
	u, err := url.Parse(s.TLSURL())
	if err != nil || u.Scheme != "rediss" {
		t.Fatalf("TLSURL %q: %v", s.TLSURL(), err)
	}
	pem, err := os.ReadFile(s.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("CAFile holds no certificate")
	}
	talk := func(cmds ...string) []string {
		t.Helper()
		c, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var out []string
		for _, cmd := range cmds {
			fmt.Fprintf(c, "%s\r\n", cmd)
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.TrimSpace(line))
		}
		return out
	}
	if got := talk("AUTH s3cret", "PING"); got[0] != "+OK" || got[1] != "+PONG" {
		t.Errorf("with the password: %q", got)
	}
	if got := talk("PING"); !strings.HasPrefix(got[0], "-NOAUTH") {
		t.Errorf("without the password: %q", got)
	}
}
