package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"time"

	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/policy"

	"gopkg.in/yaml.v3"
)

// Config is the gateway's configuration file; gateway.yaml shows
// every field. Relative paths in it are relative to the file.
type Config struct {
	// Listen is the address of the HTTP listener (default
	// 127.0.0.1:8080; port 0 picks a free port, which is logged).
	Listen string `yaml:"listen"`
	// Transport is "http" (streamable HTTP, the default) or "stdio" (one
	// client on standard input and output).
	Transport string `yaml:"transport"`
	// Path is the URL path of the MCP endpoint (default /mcp). The health
	// endpoints are /healthz and /livez.
	Path string `yaml:"path"`
	// Stateless serves streamable HTTP without sessions, for running
	// several gateways behind a load balancer.
	Stateless bool `yaml:"stateless"`
	// SessionTimeout closes a client's session after this long without a
	// request (default 30m; a negative duration keeps idle sessions).
	SessionTimeout time.Duration `yaml:"session_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long (default
	// 2m; mcpserver.WithIdleTimeout).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// ReadTimeout ends a request whose body has not arrived in this long
	// (default 30s; mcpserver.WithReadTimeout). Event streams are never
	// cut by it.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// MaxSessions bounds the client sessions open at once (default 1000;
	// mcpserver.WithMaxSessions): the next initialize gets 503 with
	// Retry-After.
	MaxSessions int `yaml:"max_sessions"`
	// MaxSessionsPerPrincipal bounds the sessions of one authenticated
	// client (default 100; mcpserver.WithMaxSessionsPerPrincipal).
	MaxSessionsPerPrincipal int `yaml:"max_sessions_per_principal"`
	// MaxSessionCalls is how many calls one client session may have in
	// flight; more are refused (default 64; -1 for no limit; at most
	// maxSessionCallsLimit).
	MaxSessionCalls int `yaml:"max_session_calls"`
	// SSEPath also serves the legacy HTTP+SSE transport (protocol version
	// 2024-11-05) at this URL path, for old clients ("" for none).
	SSEPath string `yaml:"sse_path"`
	// QualifiedNames exposes every item under namespace_name, even when its
	// bare name is unique.
	QualifiedNames bool `yaml:"qualified_names"`
	// ServerEndpoints also serves each upstream (servers and openapi
	// entries) alone at <path>/<name>, under its own names, with the same
	// authentication, policy, audit and limits (mcpserver.WithNamespaces).
	// An MCP Apps host keeps one server's app from calling the tools
	// another server reserves for its own app by telling servers apart by
	// their connection, which one endpoint of all upstreams hides:
	// connect such a host to the upstreams' own endpoints.
	ServerEndpoints bool `yaml:"server_endpoints"`
	// ToolSearch serves the tools through search (progressive disclosure,
	// mcpserver.WithToolSearch): clients list three meta-tools
	// (search_tools, describe_tools, call_tool) and the tools its Always
	// patterns match, instead of every tool. Absent: every tool is listed.
	ToolSearch *ToolSearch `yaml:"tool_search"`
	// CodeMode serves code mode: run_code and declare_tools (see
	// CodeMode). Absent: no code mode.
	CodeMode *CodeMode `yaml:"code_mode"`
	// InputState gives the keys that seal the state of the input-required
	// results of 2026-07-28 clients (see InputState); absent: a random key
	// per process.
	InputState *InputState `yaml:"input_state"`
	// HealthListen is the address of the health endpoint when Transport is
	// stdio ("" for none).
	HealthListen string `yaml:"health_listen"`
	// StartupWait bounds how long the first list and item requests wait
	// for the upstreams to be ready (default 5s; 0 answers at once). See
	// mcpserver.WithStartupWait.
	StartupWait *time.Duration `yaml:"startup_wait"`
	// Metrics serves OpenTelemetry metrics in Prometheus text format at
	// /metrics, beside /healthz.
	Metrics bool `yaml:"metrics"`
	// Prompts is a directory of markdown prompts (and other files, served
	// as resources) exposed as the "user" namespace; "" for none.
	Prompts string `yaml:"prompts"`
	// Skills is a directory of skill folders (<dir>/<name>/SKILL.md, the
	// Agent Skills layout), watched and served to clients by the skills
	// extension under the "skills" namespace; "" for none.
	Skills string `yaml:"skills"`
	// Auth makes MCP clients authenticate (transport http); none by
	// default.
	Auth *Auth `yaml:"auth"`
	// AllowUnauthenticated lets the gateway listen on an address other
	// than loopback without Auth. Without it such a configuration is
	// refused: anyone who can reach the port could use every upstream.
	AllowUnauthenticated bool `yaml:"allow_unauthenticated"`
	// TokenDir keeps the OAuth tokens of upstreams authorized by a person
	// (oauth grant authorization_code), one file per upstream, readable by
	// the gateway's user only; "" keeps them in memory (the person
	// authorizes again after each restart).
	TokenDir string `yaml:"token_dir"`
	// Policy decides which tool calls run, for whom: ordered rules that
	// allow, deny or ask (see PolicyConfig). Read again on SIGHUP.
	Policy *PolicyConfig `yaml:"policy"`
	// RateLimits bound calls per principal, per tool or both; a refused
	// call is answered with the JSON-RPC error -32029 and the seconds to
	// wait (see policy.Limit). Read again on SIGHUP.
	RateLimits []policy.Limit `yaml:"rate_limits"`
	// PinsFile pins the upstreams' tool definitions in this file: a tool
	// whose name, title, description, schemas or annotations change after
	// it was first seen is quarantined (not listed, calls refused) until
	// "toolkit-gateway pins approve" accepts the change, which the running
	// gateway applies within a second (it watches the file) or on SIGHUP.
	// "" pins nothing.
	PinsFile string `yaml:"pins_file"`
	// AuditLog writes a JSON line for every tool call (see AuditLog).
	AuditLog *AuditLog `yaml:"audit_log"`
	// State shares tokens, pins and rate limits with the other replicas
	// of a fleet on Redis (see State); absent: each process keeps its own.
	State *State `yaml:"state"`
	// Servers are the upstream MCP servers.
	Servers []Server `yaml:"servers"`
	// OpenAPI are HTTP APIs described by OpenAPI documents, served beside
	// the servers (see OpenAPI).
	OpenAPI []OpenAPI `yaml:"openapi"`

	// warnings are what the check found allowed but probably unmeant,
	// each with its file, line and field; logged when the configuration
	// is put in force.
	warnings []string
}

// logWarnings logs the configuration's warnings.
func (c *Config) logWarnings(logger *slog.Logger) {
	for _, w := range c.warnings {
		logger.Warn("configuration: " + w)
	}
}

// ToolSearch configures tool search (config_toolsearch.go checks it).
type ToolSearch struct {
	// Always lists glob patterns of the tools listed as themselves: an
	// exposed name ("local_whoami"), or with a '.' a namespace.name key
	// ("github.get_*").
	Always []string `yaml:"always"`
	// Limit is how many tools a search returns when the client gives no
	// limit (default 10; at most 50).
	Limit int `yaml:"limit"`
}

// Server is one upstream MCP server.
type Server struct {
	// Name is the namespace of the server's items.
	Name string `yaml:"name"`
	// URL is an http(s) URL (streamable HTTP, falling back to SSE) or a
	// stdio: URL (see package mcp). Give URL or Command, not both.
	URL string `yaml:"url"`
	// Command starts the server as a child process speaking MCP on stdio:
	// the program (a name looked up in PATH, or a path) and its arguments.
	Command []string `yaml:"command"`
	// Env adds environment variables to the child process.
	Env map[string]string `yaml:"env"`
	// Dir is the child process's working directory.
	Dir string `yaml:"dir"`
	// Headers are sent with every HTTP request. ${VAR} in a value is
	// replaced by the environment variable VAR, which must be set.
	Headers map[string]string `yaml:"headers"`
	// Timeouts tune the connection.
	Timeouts Timeouts `yaml:"timeouts"`
	// Tools selects the server's tools that are served.
	Tools ToolFilter `yaml:"tools"`
	// MaxConcurrency bounds the requests in flight to the server at once;
	// further calls wait for a slot (mcp.Limits.MaxConcurrency). 0: no limit.
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxResultBytes refuses tool results, prompts and resource reads
	// larger than this many bytes (mcp.Limits.MaxResultBytes). 0: no limit.
	MaxResultBytes int64 `yaml:"max_result_bytes"`
	// MaxListItems lowers the items of one kind (tools, prompts,
	// resources, templates) taken from the server (mcp.Limits.MaxListItems).
	// 0: the connector's default, 100,000.
	MaxListItems int `yaml:"max_list_items"`
	// MaxListBytes lowers the bytes of definitions of one kind kept from
	// the server, as JSON (mcp.Limits.MaxListBytes). 0: the connector's
	// default, 64 MiB.
	MaxListBytes int64 `yaml:"max_list_bytes"`
	// OAuth authorizes the gateway to a server that asks for OAuth.
	OAuth *OAuth `yaml:"oauth"`
	// UpstreamSessions is "shared" (the default: one upstream session
	// serves every client) or "per_client": each client session gets an
	// upstream session of its own (for a command, a process of its own),
	// opened when the client's session starts and closed when it ends,
	// which offers the server that client's roots and sends it the
	// server's sampling and elicitation requests (mcp.OptPerClient).
	// Needs client sessions: not with stateless.
	UpstreamSessions string `yaml:"upstream_sessions"`
	// MaxUpstreamSessions bounds the per_client upstream sessions open at
	// once (default 100, at most maxUpstreamSessionsLimit); a client
	// beyond it has its calls to the server refused with an error naming
	// the limit.
	MaxUpstreamSessions int `yaml:"max_upstream_sessions"`
	// MaxUpstreamSessionsPerPrincipal bounds the per_client upstream
	// sessions of the clients of one authenticated principal (default
	// mcp.DefaultMaxClientSessionsPerPrincipal, at most
	// max_upstream_sessions), so that one token cannot take them all;
	// at a limit, a session that has had no call for a minute makes room
	// (mcp.ClientSessionLimits).
	MaxUpstreamSessionsPerPrincipal int `yaml:"max_upstream_sessions_per_principal"`
	// UpstreamIdleTimeout closes a per_client upstream session (for a
	// command, ends its process) that has had no call for this long,
	// although its client's session goes on (default
	// mcp.DefaultClientSessionIdle); the client's next call opens another.
	UpstreamIdleTimeout time.Duration `yaml:"upstream_idle_timeout"`
	// Extensions are extensions (SEP-1724) the gateway declares to the
	// server on every upstream session, id to settings object
	// (mcp.OptExtensions): a shared session speaks for every client, so
	// name only what every client of the gateway can use (an MCP Apps
	// server registers its UI tools for io.modelcontextprotocol/ui). A
	// per_client session also declares its client's own.
	Extensions map[string]any `yaml:"extensions"`

	endpoint string // the connector URL, from URL or Command
	line     int    // where the entry starts, for messages
}

// Timeouts tune one upstream's connection; zero means the default.
type Timeouts struct {
	// Connect bounds the handshake and the first listing of items.
	Connect time.Duration `yaml:"connect"`
	// Call bounds one tool call.
	Call time.Duration `yaml:"call"`
	// Reconnect bounds how long a call made while the server is down waits
	// for it to come back.
	Reconnect time.Duration `yaml:"reconnect"`
	// BackoffMax caps the delay between reconnection attempts.
	BackoffMax time.Duration `yaml:"backoff_max"`
}

// ToolFilter selects tools by name with glob patterns (path.Match syntax:
// "*", "?", "[a-z]"). A tool is served when it matches an Allow pattern (or
// Allow is empty) and matches no Deny pattern.
type ToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// Values of Server.UpstreamSessions.
const (
	upstreamShared    = "shared"
	upstreamPerClient = "per_client"
)

// Endpoint returns the URL the gateway connects to.
func (s Server) Endpoint() string { return s.endpoint }

// perClient reports whether each client gets an upstream session of its
// own.
func (s Server) perClient() bool { return s.UpstreamSessions == upstreamPerClient }

// sameAs reports whether s and o describe the same upstream the same way,
// wherever they sit in their files.
func (s Server) sameAs(o Server) bool {
	s.line, o.line = 0, 0
	return reflect.DeepEqual(s, o)
}

// Defaults of the configuration.
const (
	defaultListen      = "127.0.0.1:8080"
	defaultPath        = "/mcp"
	defaultStartupWait = 5 * time.Second
	metricsPath        = "/metrics"
)

// namespacePattern is the shape of a namespace: letters, digits, '_' and
// '-', starting with a letter or '_', at most 64 characters.
var namespacePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// loadConfig reads and checks the configuration file at file. Every
// problem is reported, each with the file, line and field it concerns.
func loadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parseConfig(file, data)
}

// parseConfig parses the configuration text data read from file.
func parseConfig(file string, data []byte) (*Config, error) {
	// The node tree keeps the positions used in messages; the strict
	// decoder refuses unknown fields and wrong types, naming their lines.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, nil, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: the configuration is empty", file)
	}
	if root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the configuration must be a mapping of fields", file, root.Content[0].Line)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var cfg Config
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(file, &root, err)
	}
	v := &validator{file: file, root: &root, dir: filepath.Dir(file)}
	v.check(&cfg)
	if err := errors.Join(v.errs...); err != nil {
		return nil, err
	}
	cfg.warnings = v.warnings
	return &cfg, nil
}

// yamlLine matches the position yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// unknownField matches yaml.v3's message for a field KnownFields refused.
var unknownField = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)

// ceilings are the HTTP face's limits the configuration sets; the others
// keep mcpserver's defaults.
func (c *Config) ceilings() []mcpserver.HTTPOption {
	var opts []mcpserver.HTTPOption
	if c.IdleTimeout > 0 {
		opts = append(opts, mcpserver.WithIdleTimeout(c.IdleTimeout))
	}
	if c.ReadTimeout > 0 {
		opts = append(opts, mcpserver.WithReadTimeout(c.ReadTimeout))
	}
	if c.MaxSessions > 0 {
		opts = append(opts, mcpserver.WithMaxSessions(c.MaxSessions))
	}
	if c.MaxSessionsPerPrincipal > 0 {
		opts = append(opts, mcpserver.WithMaxSessionsPerPrincipal(c.MaxSessionsPerPrincipal))
	}
	return opts
}
