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

// TestConfigOpenAPIPerUser: an oauth2 scheme with per_user is read with
// its client, redirect URL and endpoints; bad combinations are refused
// with the file, line and key.
func TestConfigOpenAPIPerUser(t *testing.T) {
	t.Setenv("OA_SECRET", "s3cret")
	dir := t.TempDir()
	writeFile(t, dir, "tokens", tokenA+"\n")
	const authed = "auth: {bearer: {tokens_file: tokens}}\n"
	const entry = "openapi:\n  - name: gh\n    document: gh.yaml\n    auth:\n      oauth:\n"
	cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(authed+entry+`        per_user: true
        client_id: gw
        client_secret_env: OA_SECRET
        redirect_url: https://gw.example/oauth/callback
        authorization_url: https://as.example/authorize
        token_url: https://as.example/token
        scopes: [repo]
      key: {api_key_env: OA_SECRET}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.OpenAPI[0]
	if _, ok := o.creds["oauth"]; ok || o.userSecrets["oauth"] != "s3cret" || o.creds["key"].APIKey != "s3cret" || o.Auth["oauth"].TokenURL != "https://as.example/token" {
		t.Errorf("entry: creds %v, users %d", o.creds, len(o.userSecrets))
	}
	// A public client has no secret.
	if _, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(authed+entry+"        {per_user: true, client_id: gw, redirect_url: 'https://gw.example/cb'}\n")); err != nil {
		t.Errorf("a public client: %v", err)
	}
	const ok = "        per_user: true\n        client_id: gw\n        redirect_url: https://gw.example/cb\n"
	checkConfigErrors(t, dir, []configError{
		{"no auth", entry + ok, "gw.yaml:6: openapi[0].auth.oauth.per_user: per_user needs the gateway to authenticate its clients"},
		{"no client", authed + entry + "        per_user: true\n        redirect_url: https://gw.example/cb\n", "gw.yaml:6: openapi[0].auth.oauth.client_id: missing: per_user needs client_id"},
		{"no redirect", authed + entry + "        per_user: true\n        client_id: gw\n", "gw.yaml:6: openapi[0].auth.oauth: missing: per_user needs the gateway's public URL"},
		{"http redirect", authed + entry + "        per_user: true\n        client_id: gw\n        redirect_url: http://gw.example/cb\n", "gw.yaml:9: openapi[0].auth.oauth.redirect_url: redirect URL \"http://gw.example/cb\": want https"},
		{"mcp path", authed + entry + "        per_user: true\n        client_id: gw\n        redirect_url: https://gw.example/mcp\n", "gw.yaml:9: openapi[0].auth.oauth.redirect_url: the path /mcp is the gateway's for something else"},
		{"bad token url", authed + entry + ok + "        token_url: /token\n", `gw.yaml:10: openapi[0].auth.oauth.token_url: "/token" is not an absolute http(s) URL`},
		{"with a key", authed + entry + ok + "        token_env: OA_SECRET\n", "gw.yaml:7: openapi[0].auth.oauth.per_user: per_user goes with client_id"},
		{"unset secret", authed + entry + ok + "        client_secret_env: OA_UNSET_SECRET\n", "gw.yaml:10: openapi[0].auth.oauth.client_secret_env: environment variable OA_UNSET_SECRET is not set"},
		{"redirect without per_user", authed + entry + "        client_id: gw\n        client_secret_env: OA_SECRET\n        redirect_url: https://gw.example/cb\n", "gw.yaml:9: openapi[0].auth.oauth.redirect_url: goes with per_user: true"},
	})
}
