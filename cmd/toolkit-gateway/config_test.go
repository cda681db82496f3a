package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit/mcp"
)

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXAMPLE_TEST_TOKEN", "s3cret")
	file := filepath.Join(dir, "gw.yaml")
	cfg, err := parseConfig(file, []byte(`
prompts: prompts
servers:
  - name: local
    command: [./bin/server, --verbose]
    dir: work
    env: {B: "2", A: "1"}
    tools: {allow: ["get_*"], deny: [get_secret]}
  - name: remote-api
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${EXAMPLE_TEST_TOKEN}"}
    timeouts: {connect: 5s, call: 1m30s, reconnect: 2s, backoff_max: 10s}
    max_concurrency: 4
    max_result_bytes: 1048576
    max_list_items: 500
    max_list_bytes: 1048576
  - name: path
    command: [go, run, ., mcp-server]
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != defaultListen || cfg.Transport != "http" || cfg.Path != defaultPath {
		t.Errorf("defaults: listen %q transport %q path %q", cfg.Listen, cfg.Transport, cfg.Path)
	}
	if want := filepath.Join(dir, "prompts"); cfg.Prompts != want {
		t.Errorf("prompts = %q, want %q", cfg.Prompts, want)
	}
	if len(cfg.Servers) != 3 {
		t.Fatalf("%d servers", len(cfg.Servers))
	}

	local, err := mcp.ParseStdioURL(cfg.Servers[0].Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	if local.Path != filepath.Join(dir, "bin/server") || local.Dir != filepath.Join(dir, "work") ||
		strings.Join(local.Args, " ") != "--verbose" || strings.Join(local.Env, " ") != "A=1 B=2" {
		t.Errorf("local command = %+v", local)
	}
	if !cfg.Servers[0].Tools.keeps("get_user") || cfg.Servers[0].Tools.keeps("get_secret") || cfg.Servers[0].Tools.keeps("delete_user") {
		t.Errorf("tool filter = %+v", cfg.Servers[0].Tools)
	}

	remote := cfg.Servers[1]
	if remote.Endpoint() != "https://mcp.example.com/mcp" || remote.Headers["Authorization"] != "Bearer s3cret" {
		t.Errorf("remote = %+v", remote)
	}
	if remote.Timeouts != (Timeouts{Connect: 5 * time.Second, Call: 90 * time.Second, Reconnect: 2 * time.Second, BackoffMax: 10 * time.Second}) {
		t.Errorf("timeouts = %+v", remote.Timeouts)
	}
	if remote.MaxConcurrency != 4 || remote.MaxResultBytes != 1<<20 {
		t.Errorf("max_concurrency %d, max_result_bytes %d", remote.MaxConcurrency, remote.MaxResultBytes)
	}
	if remote.MaxListItems != 500 || remote.MaxListBytes != 1<<20 {
		t.Errorf("max_list_items %d, max_list_bytes %d", remote.MaxListItems, remote.MaxListBytes)
	}

	bare, err := mcp.ParseStdioURL(cfg.Servers[2].Endpoint())
	if err != nil || bare.Path != "go" || bare.Dir != "" {
		t.Errorf("bare command = %+v, %v", bare, err)
	}

	// The same entry elsewhere in a file is the same upstream.
	moved := cfg.Servers[1]
	moved.line = 99
	if !moved.sameAs(cfg.Servers[1]) {
		t.Error("sameAs depends on the line")
	}
	changed := cfg.Servers[1]
	changed.Tools.Deny = []string{"x"}
	if changed.sameAs(cfg.Servers[1]) {
		t.Error("sameAs misses a changed filter")
	}
}

// TestParseConfigErrors checks that every problem is refused with the
// file, the line and the field it concerns.
// TestParseConfigErrorsHideSecrets checks that an unusable server URL is
// shown without its password and query, where secrets go.
func TestParseConfigErrorsHideSecrets(t *testing.T) {
	for _, u := range []string{
		"https://user:pass-secret@h/m%zzcp?token=query-secret",
		"https://user:pass-secret@/mcp?token=query-secret",
		"ftp://user:pass-secret@h/mcp?token=query-secret",
		"stdio:///c%zzmd?env=KEY%3Dquery-secret",
	} {
		_, err := parseConfig("gw.yaml", []byte("servers:\n  - name: a\n    url: "+u+"\n"))
		if err == nil || !strings.Contains(err.Error(), "gw.yaml:3: servers[0].url: ") {
			t.Fatalf("%s: %v", u, err)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows a secret: %v", u, err)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Setenv("EXAMPLE_TEST_UNSET", "")
	os.Unsetenv("EXAMPLE_TEST_UNSET")
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"empty", "", []string{"gw.yaml: the configuration is empty"}},
		{"not a mapping", "- a\n- b\n", []string{"gw.yaml:1: the configuration must be a mapping"}},
		{"syntax", "servers:\n  - name: a\n   url: x\n", []string{"gw.yaml:1: did not find expected"}},
		{"syntax tab", "servers:\n\t- name: a\n", []string{"gw.yaml:2: "}},
		{"unknown top field", "listen: 127.0.0.1:1\nlisten_addr: x\n", []string{"gw.yaml:2: listen_addr: unknown field (known: listen, transport, path, stateless, session_timeout, idle_timeout, read_timeout, max_sessions, max_sessions_per_principal, max_session_calls, sse_path, qualified_names, server_endpoints, tool_search, code_mode, input_state, health_listen, startup_wait, metrics, prompts, skills, auth, allow_unauthenticated, token_dir, policy, rate_limits, pins_file, audit_log, state, servers, openapi)"}},
		{"unknown server field", "servers:\n  - name: a\n    urll: http://x/\n", []string{"gw.yaml:3: servers[0].urll: unknown field (known: name, url, command, env, dir, headers, timeouts, tools, max_concurrency, max_result_bytes, max_list_items, max_list_bytes, oauth, upstream_sessions, max_upstream_sessions, max_upstream_sessions_per_principal, upstream_idle_timeout, extensions)"}},
		{"unknown timeout", "servers:\n  - name: a\n    url: http://x/\n    timeouts: {connect: 1s, read: 2s}\n", []string{"gw.yaml:4: servers[0].timeouts.read: unknown field (known: connect, call, reconnect, backoff_max)"}},
		{"bad duration", "servers:\n  - name: a\n    url: http://x/\n    timeouts:\n      connect: soon\n",
			[]string{`gw.yaml:5: servers[0].timeouts.connect: cannot use "soon" as a duration`}},
		{"bad durations on one line", "servers:\n  - name: a\n    url: http://x/\n  - name: b\n    url: http://y/\n    timeouts: {connect: 1s, call: later, reconnect: later}\n",
			[]string{`gw.yaml:6: servers[1].timeouts.call: cannot use "later" as a duration`, `gw.yaml:6: servers[1].timeouts.reconnect: cannot use "later" as a duration`}},
		{"long value", "servers:\n  - name: a\n    url: http://x/\n    timeouts:\n      backoff_max: eventually-maybe\n",
			[]string{`gw.yaml:5: servers[0].timeouts.backoff_max: cannot use "eventually-maybe" as a duration`}},
		{"wrong type", "servers:\n  - name: a\n    command: go run\n", []string{`gw.yaml:3: servers[0].command: cannot use "go run" as a list of strings`}},
		{"list for a string", "servers:\n  - name: a\n    url: [http://x/]\n", []string{"gw.yaml:3: servers[0].url: cannot use a list as a string"}},
		{"mapping for a list", "servers: {name: a}\n", []string{"gw.yaml:1: servers: cannot use a mapping as a list"}},
		{"idle timeout negative", "idle_timeout: -1s\n", []string{"gw.yaml:1: idle_timeout: -1s is out of range: use 1ms to 24h"}},
		{"read timeout huge", "read_timeout: 48h\n", []string{"gw.yaml:1: read_timeout: 48h0m0s is out of range"}},
		{"max sessions negative", "max_sessions: -1\n", []string{"gw.yaml:1: max_sessions: -1 is out of range"}},
		{"max sessions per principal huge", "max_sessions_per_principal: 99999999\n", []string{"gw.yaml:1: max_sessions_per_principal: 99999999 is out of range"}},
		{"session calls negative", "max_session_calls: -5\n", []string{"gw.yaml:1: max_session_calls: -5 is out of range: use 1 to 10000, or -1 for no limit"}},
		{"session calls huge", "max_session_calls: 99999999999\n", []string{"gw.yaml:1: max_session_calls: 99999999999 is out of range"}},
		{"concurrency huge", "servers:\n  - name: a\n    url: http://x/\n    max_concurrency: 1000000\n", []string{"gw.yaml:4: servers[0].max_concurrency: 1000000 is out of range"}},
		{"result bytes huge", "servers:\n  - name: a\n    url: http://x/\n    max_result_bytes: 99999999999\n", []string{"gw.yaml:4: servers[0].max_result_bytes: 99999999999 is out of range"}},
		{"list items huge", "servers:\n  - name: a\n    url: http://x/\n    max_list_items: 100001\n", []string{"gw.yaml:4: servers[0].max_list_items: 100001 is out of range: use 0 (the default) to 100000"}},
		{"list items negative", "servers:\n  - name: a\n    url: http://x/\n    max_list_items: -1\n", []string{"gw.yaml:4: servers[0].max_list_items: -1 is out of range"}},
		{"list bytes small", "servers:\n  - name: a\n    url: http://x/\n    max_list_bytes: 100\n", []string{"gw.yaml:4: servers[0].max_list_bytes: 100 is out of range: use 0 (the default) or 1024 to 67108864"}},
		{"list bytes huge", "servers:\n  - name: a\n    url: http://x/\n    max_list_bytes: 99999999999\n", []string{"gw.yaml:4: servers[0].max_list_bytes: 99999999999 is out of range"}},
		{"timeout huge", "session_timeout: 100000h\n", []string{"gw.yaml:1: session_timeout: 100000h0m0s is out of range"}},
		{"open listen without auth", "listen: 0.0.0.0:8080\n", []string{`gw.yaml:1: listen: "0.0.0.0:8080" is reachable from other hosts and auth is not configured`}},
		{"empty host without auth", "listen: :8080\n", []string{`gw.yaml:1: listen: ":8080" is reachable from other hosts`}},
		{"not a bool", "stateless: sometimes\n", []string{`gw.yaml:1: stateless: cannot use "sometimes" as true or false`}},
		{"bad header value", "servers:\n  - name: a\n    url: http://x/\n    headers:\n      X-A: [1]\n", []string{"gw.yaml:5: servers[0].headers.X-A: cannot use a list as a string"}},
		{"transport", "transport: grpc\n", []string{`gw.yaml:1: transport: "grpc" is not a transport`}},
		{"listen", "listen: localhost\n", []string{`gw.yaml:1: listen: "localhost" is not a host:port`}},
		{"path", "path: mcp\n", []string{`gw.yaml:1: path: "mcp" must start with /`}},
		{"sse_path", "sse_path: /mcp\n", []string{`gw.yaml:1: sse_path: "/mcp" must start with / and be neither path nor one of /healthz, /livez, /metrics`}},
		{"metrics path", "path: /metrics\n", []string{`gw.yaml:1: path: "/metrics" must start with / and not be one of`}},
		{"reserved path", "path: /livez\n", []string{`gw.yaml:1: path: "/livez" must start with / and not be one of /healthz, /livez, /metrics`}},
		{"session_timeout", "session_timeout: forever\n", []string{`gw.yaml:1: session_timeout: cannot use "forever" as a duration`}},
		{"prompts", "prompts: nowhere\n", []string{"gw.yaml:1: prompts: ", "nowhere is not a directory"}},
		{"no name", "servers:\n  - url: http://x/\n", []string{"gw.yaml:2: servers[0].name: missing"}},
		{"dotted name", "servers:\n  - name: a.b\n    url: http://x/\n", []string{`gw.yaml:2: servers[0].name: "a.b" is not a namespace`}},
		{"reserved name", "servers:\n  - name: user\n    url: http://x/\n", []string{`gw.yaml:2: servers[0].name: "user" is reserved`}},
		{"duplicate name", "servers:\n  - name: a\n    url: http://x/\n  - name: a\n    url: http://y/\n", []string{`gw.yaml:4: servers[1].name: "a" is already the name of servers[0]`}},
		{"duplicate url", "servers:\n  - name: a\n    url: http://x/\n  - name: b\n    url: http://x/\n", []string{"gw.yaml:5: servers[1].url: servers[0] already connects there"}},
		{"no endpoint", "servers:\n  - name: a\n", []string{"gw.yaml:2: servers[0]: missing: give the server's url or command"}},
		{"both", "servers:\n  - name: a\n    url: http://x/\n    command: [x]\n", []string{"gw.yaml:4: servers[0].command: give url or command, not both"}},
		{"scheme", "servers:\n  - name: a\n    url: ftp://x/\n", []string{`gw.yaml:3: servers[0].url: "ftp://x/": use an http`}},
		{"no host", "servers:\n  - name: a\n    url: http:///mcp\n", []string{`gw.yaml:3: servers[0].url: "http:///mcp" has no host`}},
		{"stdio url", "servers:\n  - name: a\n    url: stdio:relative/path\n", []string{"gw.yaml:3: servers[0].url: "}},
		{"empty program", "servers:\n  - name: a\n    command: ['', x]\n", []string{"gw.yaml:3: servers[0].command[0]: the program is empty"}},
		{"headers on stdio", "servers:\n  - name: a\n    command: [x]\n    headers: {A: b}\n", []string{"gw.yaml:4: servers[0].headers: headers go with http(s) URLs"}},
		{"env on url", "servers:\n  - name: a\n    url: http://x/\n    env: {A: b}\n", []string{"gw.yaml:3: servers[0].url: env and dir go with command"}},
		{"unset variable", "servers:\n  - name: a\n    url: http://x/\n    headers:\n      Authorization: Bearer ${EXAMPLE_TEST_UNSET}\n",
			[]string{"gw.yaml:5: servers[0].headers.Authorization: environment variable EXAMPLE_TEST_UNSET is not set"}},
		{"negative timeout", "servers:\n  - name: a\n    url: http://x/\n    timeouts: {call: -1s}\n", []string{"gw.yaml:4: servers[0].timeouts.call: must not be negative"}},
		{"negative max_concurrency", "servers:\n  - name: a\n    url: http://x/\n    max_concurrency: -1\n", []string{"gw.yaml:4: servers[0].max_concurrency: must not be negative"}},
		{"negative max_result_bytes", "servers:\n  - name: a\n    url: http://x/\n    max_result_bytes: -5\n", []string{"gw.yaml:4: servers[0].max_result_bytes: must not be negative"}},
		{"max_concurrency not a number", "servers:\n  - name: a\n    url: http://x/\n    max_concurrency: many\n", []string{`gw.yaml:4: servers[0].max_concurrency: cannot use "many" as`}},
		{"bad pattern", "servers:\n  - name: a\n    url: http://x/\n    tools:\n      deny: [ok, '[']\n", []string{`gw.yaml:5: servers[0].tools.deny[1]: "[" is not a glob pattern`}},
		{"several", "transport: x\nlisten: y\n", []string{"gw.yaml:1: transport", "gw.yaml:2: listen"}},
		{"unknown upstream_sessions", "servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_user\n", []string{`gw.yaml:4: servers[0].upstream_sessions: "per_user": use shared or per_client`}},
		{"max_upstream_sessions shared", "servers:\n  - name: a\n    url: http://x/\n    max_upstream_sessions: 3\n", []string{"gw.yaml:4: servers[0].max_upstream_sessions: goes with upstream_sessions: per_client"}},
		{"max_upstream_sessions huge", "servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_client\n    max_upstream_sessions: 100000\n", []string{"gw.yaml:5: servers[0].max_upstream_sessions: 100000 is out of range: use 1 to 10000"}},
		{"max_upstream_sessions_per_principal shared", "servers:\n  - name: a\n    url: http://x/\n    max_upstream_sessions_per_principal: 3\n", []string{"gw.yaml:4: servers[0].max_upstream_sessions_per_principal: goes with upstream_sessions: per_client"}},
		{"max_upstream_sessions_per_principal above max", "servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_client\n    max_upstream_sessions: 4\n    max_upstream_sessions_per_principal: 5\n", []string{"gw.yaml:6: servers[0].max_upstream_sessions_per_principal: 5 is more than max_upstream_sessions (4)"}},
		{"max_upstream_sessions_per_principal negative", "servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_client\n    max_upstream_sessions_per_principal: -1\n", []string{"gw.yaml:5: servers[0].max_upstream_sessions_per_principal: -1 is out of range"}},
		{"upstream_idle_timeout shared", "servers:\n  - name: a\n    url: http://x/\n    upstream_idle_timeout: 1m\n", []string{"gw.yaml:4: servers[0].upstream_idle_timeout: goes with upstream_sessions: per_client"}},
		{"upstream_idle_timeout negative", "servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_client\n    upstream_idle_timeout: -1m\n", []string{"gw.yaml:5: servers[0].upstream_idle_timeout: -1m0s is out of range"}},
		{"max_upstream_sessions negative", "servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_client\n    max_upstream_sessions: -1\n", []string{"gw.yaml:5: servers[0].max_upstream_sessions: -1 is out of range"}},
		{"extension settings not an object", "servers:\n  - name: a\n    url: http://x/\n    extensions:\n      io.modelcontextprotocol/ui: 3\n", []string{"gw.yaml:4: servers[0].extensions: bad parameter: extensions: each one's settings must be an object"}},
		{"per_client stateless", "stateless: true\nservers:\n  - name: a\n    url: http://x/\n    upstream_sessions: per_client\n", []string{"gw.yaml:5: servers[0].upstream_sessions: per_client needs client sessions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("gw.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestSampleConfig checks that the configuration in the repository is
// valid.
func TestSampleConfig(t *testing.T) {
	cfg, err := loadConfig("gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "example" {
		t.Errorf("servers = %+v", cfg.Servers)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("servers:\n  - name: a\n    url: http://x/\n"))
	f.Add([]byte("servers:\n  - name: a\n    command: [go, run, .]\n    env: {A: b}\n    tools: {deny: ['[']}\n"))
	f.Add([]byte("listen: :0\ntransport: stdio\nprompts: .\n"))
	f.Add([]byte("- a\n"))
	f.Add([]byte("state:\n  redis: {url_env: X, timeout: -1s}\n  keys_file: k\n  rate_limits_unavailable: closed\n"))
	f.Add([]byte("servers:\n  - name: a\n    command: [x]\n    upstream_sessions: per_client\n    max_upstream_sessions: 99999999999999999999\n"))
	f.Add([]byte("stateless: true\nservers:\n  - name: a\n    url: http://x/\n    upstream_sessions: [per_client]\n"))
	f.Add([]byte("auth:\n  bearer: {tokens_env: HOME}\n  jwt: {jwks_url: 'https://a/j', issuer: x, audience: 'https://g/mcp', algorithms: [none]}\n"))
	f.Add([]byte("servers:\n  - name: a\n    url: http://x/\n    oauth: {grant: client_credentials, client_id: c, redirect_url: 'http://[::1]:0/callback'}\n"))
	f.Add([]byte("policy:\n  default: ask\n  rules:\n    - {name: r, effect: deny, principals: ['jwt:*'], tools: ['a*b?'], annotations: {destructive: true}, arguments: [{path: /a/0, matches: 'x*'}]}\n"))
	f.Add([]byte("policy:\n  rules:\n    - effect: permit\n"))
	f.Add([]byte("policy:\n  rules:\n    - {effect: deny, arguments: [{path: '/~2', equals: {a: [1, null]}}]}\n"))
	f.Add([]byte("rate_limits:\n  - {per: principal_tool, rate: 5/10s, burst: 3}\n  - {rate: 0/s}\n  - {rate: '\"'}\n"))
	f.Add([]byte("pins_file: p.json\naudit_log: {file: a.log, max_bytes: 4096, max_files: 1, arguments: true}\n"))
	f.Add([]byte("auth: {bearer: {tokens_env: HOME}}\nservers:\n  - name: a\n    url: http://x/\n    oauth: {per_user: true, redirect_url: 'https://g/%zz'}\n"))
	f.Add([]byte("auth: {bearer: {tokens_env: HOME}}\nopenapi:\n  - name: a\n    document: a.yaml\n    auth: {o: {per_user: true, client_id: c, redirect_url: 'https://g/cb', token_url: '%zz', api_key_env: HOME}}\n"))
	f.Add([]byte("servers:\n  - name: a\n    url: http://x/\n    upstream_sessions: shared\n    oauth: {per_user: yes, grant: client_credentials, redirect_url: 'http://[::1]:0/healthz'}\n"))
	f.Add([]byte("auth: {jwt: {jwks_url: 'https://a/j', issuer: x, audience: 'https://g/mcp'}}\nservers:\n  - name: a\n    url: http://x/\n    oauth: {per_user: true, grant: token_exchange, client_id: c, audience: [a], scopes: ['', 'a b'], redirect_url: 'https://g/cb'}\n"))
	f.Add([]byte("auth: {bearer: {tokens_env: HOME}}\nservers:\n  - name: a\n    url: http://x/\n    upstream_sessions: shared\n    oauth: {grant: token_exchange, client_secret_file: /dev/null}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseConfig("fuzz.yaml", data)
		if err == nil && cfg == nil {
			t.Fatal("no configuration and no error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yaml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// TestParseConfigUpstreamSessions: upstream_sessions is shared unless
// the file says per_client, whose maximum defaults to the connector's.
func TestParseConfigUpstreamSessions(t *testing.T) {
	cfg, err := parseConfig("gw.yaml", []byte("servers:\n  - name: a\n    url: http://x/\n  - name: b\n    url: http://y/\n    upstream_sessions: per_client\n  - name: c\n    url: http://z/\n    upstream_sessions: per_client\n    max_upstream_sessions: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		mode string
		max  int
	}{{"shared", 0}, {"per_client", mcp.DefaultMaxClientSessions}, {"per_client", 7}} {
		s := cfg.Servers[i]
		if s.UpstreamSessions != want.mode || s.MaxUpstreamSessions != want.max {
			t.Errorf("servers[%d]: %s, %d; want %s, %d", i, s.UpstreamSessions, s.MaxUpstreamSessions, want.mode, want.max)
		}
	}
}
