package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigOpenAPI(t *testing.T) {
	t.Setenv("OA_KEY", "k")
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	cfg, err := parseConfig(file, []byte(`openapi:
  - name: pets
    document: pets.yaml
    base_url: http://127.0.0.1:4010
    include: {tags: [pet], paths: ["/pet/**"]}
    headers: {Authorization: "Bearer ${OA_KEY}"}
    auth:
      api_key: {api_key_env: OA_KEY}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.OpenAPI[0]
	if o.Document != filepath.Join(filepath.Dir(file), "pets.yaml") || o.creds["api_key"].APIKey != "k" || o.Headers["Authorization"] != "Bearer k" || o.endpoint() != "openapi:pets" {
		t.Errorf("entry: %+v", o)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"no name", "openapi:\n  - document: a.yaml\n", "openapi[0].name"},
		{"bad name", "openapi:\n  - {name: a.b, document: a.yaml}\n", "not a namespace"},
		{"taken by a server", "servers:\n  - {name: a, url: 'http://127.0.0.1:1/mcp'}\nopenapi:\n  - {name: a, document: a.yaml}\n", "already the name of servers[0]"},
		{"twice", "openapi:\n  - {name: a, document: a.yaml}\n  - {name: a, document: b.yaml}\n", "already the name of openapi[0]"},
		{"no document", "openapi:\n  - {name: a}\n", "missing: the OpenAPI document"},
		{"unset variable", "openapi:\n  - {name: a, document: a.yaml, auth: {k: {api_key_env: OA_UNSET_VARIABLE}}}\n", "OA_UNSET_VARIABLE is not set"},
		{"empty credential", "openapi:\n  - {name: a, document: a.yaml, auth: {k: {}}}\n", "give api_key_env"},
		{"bad pattern", "openapi:\n  - {name: a, document: a.yaml, include: {paths: ['[']}}\n", "openapi[0].include"},
		{"bad allow", "openapi:\n  - {name: a, document: a.yaml, allow: ['http://x/path']}\n", "allowed destination"},
		{"placeholder", "openapi:\n  - {name: a, document: '${HOME}/a.yaml'}\n", "${...} is expanded only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(file, []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
