package main

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// InputState gives the keys that seal the requestState of the
// input-required results the gateway answers 2026-07-28 clients with
// (mcpserver.WithInputStateKeys). Without it each gateway process makes a
// random key. Gateways behind one load balancer share the keys, so that
// each opens the others' states (a retry reaching another replica is then
// refused as "runs on another replica", not as a forgery); the rounds of
// one call still need the same replica. Give KeysEnv or KeysFile.
type InputState struct {
	// KeysEnv names an environment variable holding the keys, base64
	// (standard or URL alphabet) of 16, 24 or 32 bytes each, separated by
	// commas or white space. The first seals, all open: to rotate, put the
	// new key first and drop the old one after the 10 minutes a state lives.
	KeysEnv string `yaml:"keys_env"`
	// KeysFile is a file holding the keys so, one a line (blank lines and
	// lines starting with # are skipped); readable by the gateway's user
	// only, as the tokens file.
	KeysFile string `yaml:"keys_file"`

	keys [][]byte // decoded by checkInputState
}

// checkInputState checks input_state and decodes its keys.
func (v *validator) checkInputState(in *InputState) {
	if in != nil {
		v.checkKeys(in, "input_state")
	}
}

// checkKeys checks the keys_env or keys_file of section and decodes its
// keys into in.keys.
func (v *validator) checkKeys(in *InputState, section string) {
	at := func(k string) []any { return []any{section, k} }
	in.keys = nil
	var text, where string
	var key []any
	switch {
	case in.KeysEnv != "" && in.KeysFile != "":
		v.fail("give keys_env or keys_file, not both", at("keys_file")...)
		return
	case in.KeysEnv != "":
		val, ok := os.LookupEnv(in.KeysEnv)
		if !ok {
			v.fail(fmt.Sprintf("environment variable %s is not set", in.KeysEnv), at("keys_env")...)
			return
		}
		text, where, key = strings.ReplaceAll(val, ",", " "), in.KeysEnv, at("keys_env")
	case in.KeysFile != "":
		in.KeysFile = v.abs(in.KeysFile)
		data, err := readSecretFile(in.KeysFile)
		if err != nil {
			v.fail(err.Error(), at("keys_file")...)
			return
		}
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		text, where, key = strings.Join(lines, " "), in.KeysFile, at("keys_file")
	default:
		v.fail("give keys_env or keys_file", section)
		return
	}
	fields := strings.Fields(text)
	if len(fields) == 0 {
		v.fail(fmt.Sprintf("%s holds no key", where), key...)
	}
	for i, f := range fields {
		k, err := decodeKey(f)
		if err != nil {
			// Never the key itself: it is a secret.
			v.fail(fmt.Sprintf("key %d of %s %v", i+1, where, err), key...)
			continue
		}
		in.keys = append(in.keys, k)
	}
}

// decodeKey decodes one base64 key of an AES size.
func decodeKey(s string) ([]byte, error) {
	var k []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("is not base64")
	}
	if n := len(k); n != 16 && n != 24 && n != 32 {
		return nil, fmt.Errorf("has %d bytes, want 16, 24 or 32", n)
	}
	return k, nil
}

// String tells two input_state configurations apart without showing the
// keys ("" when nil).
func (in *InputState) String() string {
	if in == nil {
		return ""
	}
	h := sha256.New()
	for _, k := range in.keys {
		h.Write(k)
		h.Write([]byte{0})
	}
	return fmt.Sprintf("keys=%d %x", len(in.keys), h.Sum(nil)[:8])
}
