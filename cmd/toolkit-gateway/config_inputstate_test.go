package main

import (
	"bytes"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
)

// input_state takes AES keys, base64, from an environment variable or a
// file, in order (the first seals); every problem is refused with the
// line and field, and no key in the message.
func TestConfigInputState(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 16)
	b64 := base64.StdEncoding.EncodeToString
	t.Setenv("GW_TEST_KEYS", b64(k1)+", "+base64.RawURLEncoding.EncodeToString(k2))
	t.Setenv("GW_TEST_BADKEY", b64(k1)+",bm90IGEga2V5,!!!")
	t.Setenv("GW_TEST_NOKEY", " ")
	writeFile(t, dir, "keys", "# newest first\n"+b64(k2)+"\n\n"+b64(k1)+"\n")
	writeFile(t, dir, "empty", "# nothing\n")

	for yaml, want := range map[string][][]byte{
		"input_state: {keys_env: GW_TEST_KEYS}\n": {k1, k2},
		"input_state: {keys_file: keys}\n":        {k2, k1},
	} {
		cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(yaml))
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		got := cfg.InputState.keys
		if len(got) != len(want) || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
			t.Errorf("%q: keys %x", yaml, got)
		}
		if s := cfg.InputState.String(); strings.Contains(s, b64(k1)) || !strings.HasPrefix(s, "keys=2 ") {
			t.Errorf("%q: String %q", yaml, s)
		}
	}
	for yaml, want := range map[string]string{
		"input_state: {}\n":                                        "gw.yaml:1: input_state: give keys_env or keys_file",
		"input_state: {keys_env: GW_TEST_UNSET_X}\n":               "gw.yaml:1: input_state.keys_env: environment variable GW_TEST_UNSET_X is not set",
		"input_state: {keys_env: GW_TEST_NOKEY}\n":                 "gw.yaml:1: input_state.keys_env: GW_TEST_NOKEY holds no key",
		"input_state: {keys_env: GW_TEST_BADKEY}\n":                "input_state.keys_env: key 2 of GW_TEST_BADKEY has 9 bytes, want 16, 24 or 32",
		"input_state:\n  keys_env: GW_TEST_BADKEY\n":               "gw.yaml:2: input_state.keys_env: key 3 of GW_TEST_BADKEY is not base64",
		"input_state: {keys_file: empty}\n":                        "holds no key",
		"input_state: {keys_file: nowhere}\n":                      "input_state.keys_file: open ",
		"input_state: {keys_env: GW_TEST_KEYS, keys_file: keys}\n": "input_state.keys_file: give keys_env or keys_file, not both",
		"input_state: {key: abc}\n":                                "input_state.key: unknown field (known: keys_env, keys_file)",
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
		if strings.Contains(msg, b64(k1)) {
			t.Errorf("%q: the error quotes a key: %q", yaml, msg)
		}
	}
}
