package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// state takes a Redis URL from the environment and the sealing keys as
// input_state does; every problem is refused with its line and field,
// and neither the URL (it may hold a password) nor a key is quoted.
func TestConfigState(t *testing.T) {
	dir := t.TempDir()
	key := bytes.Repeat([]byte{7}, 32)
	t.Setenv("GW_TEST_STATE_KEYS", base64.StdEncoding.EncodeToString(key))
	t.Setenv("GW_TEST_REDIS", "redis://user:s3cret-pass@127.0.0.1:6379/2")
	t.Setenv("GW_TEST_NOT_REDIS", "http://user:s3cret-pass@example.com/")
	t.Setenv("GW_TEST_REDISS", "rediss://user:s3cret-pass@127.0.0.1:6380/0")
	if err := os.WriteFile(filepath.Join(dir, "notpem.txt"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	const ok = "state:\n  redis: {url_env: GW_TEST_REDIS, key_prefix: \"gw1:\", timeout: 1s}\n  keys_env: GW_TEST_STATE_KEYS\n"
	cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if st := cfg.State; st.redisOpt == nil || st.redisOpt.Addr != "127.0.0.1:6379" || st.redisOpt.DB != 2 || len(st.keys.keys) != 1 {
		t.Errorf("parsed %+v", st)
	}
	if s := cfg.State.String(); strings.Contains(s, "s3cret") || strings.Contains(s, base64.StdEncoding.EncodeToString(key)) {
		t.Errorf("String shows a secret: %q", s)
	}
	for yaml, want := range map[string]string{
		"state: {}\n": "gw.yaml:1: state: give redis: {url_env: VAR}",
		"state: {redis: {}, keys_env: GW_TEST_STATE_KEYS}\n":                                                                            "state.redis.url_env: give the environment variable",
		"state: {redis: {url_env: GW_TEST_UNSET_X}, keys_env: GW_TEST_STATE_KEYS}\n":                                                    "state.redis.url_env: environment variable GW_TEST_UNSET_X is not set",
		"state: {redis: {url_env: GW_TEST_NOT_REDIS}, keys_env: GW_TEST_STATE_KEYS}\n":                                                  "does not hold a Redis URL",
		"state: {redis: {url_env: GW_TEST_REDIS}}\n":                                                                                    "gw.yaml:1: state: give keys_env or keys_file",
		"state: {redis: {url_env: GW_TEST_REDIS, timeout: 2h}, keys_env: GW_TEST_STATE_KEYS}\n":                                         "state.redis.timeout: 2h0m0s is out of range",
		"state: {redis: {url_env: GW_TEST_REDIS}, keys_env: GW_TEST_STATE_KEYS, rate_limits_unavailable: maybe}\n":                      `state.rate_limits_unavailable: "maybe": use open or closed`,
		"pins_file: pins.json\n" + ok:                                                                                                   "gw.yaml:1: pins_file: the pins are kept in state.redis: drop pins_file",
		"state: {redis: {url: x}}\n":                                                                                                    "state.redis.url: unknown field",
		"state: {redis: {url_env: GW_TEST_REDIS, tls: {ca_file: ca.pem}}, keys_env: GW_TEST_STATE_KEYS}\n":                              "gw.yaml:1: state.redis.tls: TLS needs a rediss:// URL",
		"state: {redis: {url_env: GW_TEST_REDISS, tls: {ca_file: missing.pem}}, keys_env: GW_TEST_STATE_KEYS}\n":                        "gw.yaml:1: state.redis.tls.ca_file: cannot read it",
		"state: {redis: {url_env: GW_TEST_REDISS, tls: {ca_file: notpem.txt}}, keys_env: GW_TEST_STATE_KEYS}\n":                         "state.redis.tls.ca_file: holds no PEM certificate",
		"state: {redis: {url_env: GW_TEST_REDISS, tls: {cert_file: c.pem}}, keys_env: GW_TEST_STATE_KEYS}\n":                            "state.redis.tls.cert_file: give cert_file and key_file together",
		"state: {redis: {url_env: GW_TEST_REDISS, tls: {cert_file: notpem.txt, key_file: notpem.txt}}, keys_env: GW_TEST_STATE_KEYS}\n": "state.redis.tls.cert_file: cannot load the certificate and key",
	} {
		_, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(yaml))
		if err == nil {
			t.Errorf("%q: accepted", yaml)
			continue
		}
		msg := strings.ReplaceAll(err.Error(), filepath.Join(dir, "gw.yaml"), "gw.yaml")
		if !strings.Contains(msg, want) {
			t.Errorf("%q: error %q, want %q", yaml, msg, want)
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("%q: the error quotes the URL's password: %q", yaml, msg)
		}
	}
}
