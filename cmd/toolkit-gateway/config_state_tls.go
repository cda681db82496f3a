package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
)

// checkRedisTLS checks state.redis.tls (at path) and applies it to opt,
// the options parsed from a rediss:// URL: the authorities it trusts,
// its own certificate, the server's name.
func (v *validator) checkRedisTLS(t *RedisTLS, opt *redis.Options, path []any) {
	at := func(k string) []any { return append(append([]any(nil), path...), k) }
	if opt.TLSConfig == nil {
		v.fail("TLS needs a rediss:// URL in the environment variable of url_env", path...)
		return
	}
	cfg := opt.TLSConfig.Clone()
	if t.CAFile != "" {
		pem, err := os.ReadFile(v.abs(t.CAFile))
		switch {
		case err != nil:
			v.fail(fmt.Sprintf("cannot read it: %v", err), at("ca_file")...)
		default:
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				v.fail("holds no PEM certificate", at("ca_file")...)
			}
		}
	}
	switch {
	case (t.CertFile == "") != (t.KeyFile == ""):
		v.fail("give cert_file and key_file together", at("cert_file")...)
	case t.CertFile != "":
		cert, err := tls.LoadX509KeyPair(v.abs(t.CertFile), v.abs(t.KeyFile))
		if err != nil {
			v.fail(fmt.Sprintf("cannot load the certificate and key: %v", err), at("cert_file")...)
			break
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if t.ServerName != "" {
		cfg.ServerName = t.ServerName
	}
	opt.TLSConfig = cfg
}
