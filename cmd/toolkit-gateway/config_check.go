package main

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// validator checks a decoded configuration and fills in its defaults and
// derived values.
type validator struct {
	file string
	root *yaml.Node
	dir  string // the file's directory, for relative paths
	errs []error
	// warnings are what the configuration allows but probably does not
	// mean, each with its file, line and field (Config.warnings).
	warnings []string
}

// fail records a problem with the field at path (keys and indexes).
func (v *validator) fail(msg string, path ...any) {
	v.errs = append(v.errs, errors.New(v.at(msg, path...)))
}

// warn records a warning about the field at path.
func (v *validator) warn(msg string, path ...any) {
	v.warnings = append(v.warnings, v.at(msg, path...))
}

// at is msg about the field at path, after its file, line and name.
func (v *validator) at(msg string, path ...any) string {
	return v.where(path...) + ": " + msg
}

// where is the file, line and name of the field at path.
func (v *validator) where(path ...any) string {
	return fmt.Sprintf("%s:%d: %s", v.file, lineOf(v.root, path...), fieldName(path))
}

// abs makes a relative path relative to the configuration file.
func (v *validator) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if a, err := filepath.Abs(filepath.Join(v.dir, p)); err == nil {
		return a
	}
	return filepath.Join(v.dir, p)
}

// expand replaces ${VAR} (and $VAR) in the value of the field at path
// with the environment variable VAR, which must be set (else the field
// is refused).
func (v *validator) expand(value string, path ...any) string {
	var missing []string
	out := os.Expand(value, func(key string) string {
		val, ok := os.LookupEnv(key)
		if !ok {
			missing = append(missing, key)
		}
		return val
	})
	if len(missing) > 0 {
		v.fail(fmt.Sprintf("environment variable %s is not set", strings.Join(missing, ", ")), path...)
	}
	return out
}

// expands reports whether ${VAR} is expanded in the field at path:
// servers[i].headers.NAME, openapi[i].headers.NAME and
// servers[i].oauth.client_id.
func expands(path []any) bool {
	if len(path) != 4 || path[0] != "servers" && path[0] != "openapi" {
		return false
	}
	return path[2] == "headers" || (path[0] == "servers" && path[2] == "oauth" && path[3] == "client_id")
}

// checkPlaceholders refuses ${...} in every field where it is not
// expanded: it would be used as written.
func (v *validator) checkPlaceholders() {
	walkYAML(v.root, func(path []any, _, n *yaml.Node) bool {
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") && !expands(path) {
			v.fail("${...} is expanded only in servers[].headers and servers[].oauth.client_id, and in openapi[].headers: give the value itself (secrets through the *_env and *_file fields)", path...)
		}
		return true
	})
}

func (v *validator) check(c *Config) {
	v.checkPlaceholders()
	switch c.Transport {
	case "":
		c.Transport = "http"
	case "http", "stdio":
	default:
		v.fail(fmt.Sprintf("%q is not a transport: use http or stdio", c.Transport), "transport")
	}
	if c.Listen == "" {
		c.Listen = defaultListen
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		v.fail(fmt.Sprintf("%q is not a host:port address", c.Listen), "listen")
	}
	if c.HealthListen != "" {
		if _, _, err := net.SplitHostPort(c.HealthListen); err != nil {
			v.fail(fmt.Sprintf("%q is not a host:port address", c.HealthListen), "health_listen")
		}
	}
	if c.Path == "" {
		c.Path = defaultPath
	}
	if !strings.HasPrefix(c.Path, "/") || slices.Contains(reservedPaths, c.Path) {
		v.fail(fmt.Sprintf("%q must start with / and not be one of %s", c.Path, strings.Join(reservedPaths, ", ")), "path")
	}
	if c.SSEPath != "" && (!strings.HasPrefix(c.SSEPath, "/") || slices.Contains(reservedPaths, c.SSEPath) || c.SSEPath == c.Path) {
		v.fail(fmt.Sprintf("%q must start with / and be neither path nor one of %s", c.SSEPath, strings.Join(reservedPaths, ", ")), "sse_path")
	}
	if c.Prompts != "" {
		c.Prompts = v.abs(c.Prompts)
		if fi, err := os.Stat(c.Prompts); err != nil || !fi.IsDir() {
			v.fail(fmt.Sprintf("%s is not a directory", c.Prompts), "prompts")
		}
	}
	v.checkSkills(c)
	v.checkServing(c)
	v.checkToolSearch(c.ToolSearch)
	v.checkCodeMode(c.CodeMode)
	v.checkInputState(c.InputState)
	v.checkState(c)
	v.checkAuth(c)
	v.checkPolicy(c)
	if c.Transport == "http" && c.Auth == nil && !c.AllowUnauthenticated && !isLoopback(c.Listen) {
		v.fail(fmt.Sprintf("%q is reachable from other hosts and auth is not configured: configure auth, listen on 127.0.0.1, or set allow_unauthenticated: true", c.Listen), "listen")
	}
	if c.TokenDir != "" {
		c.TokenDir = v.abs(c.TokenDir)
		if fi, err := os.Stat(c.TokenDir); err == nil && !fi.IsDir() {
			v.fail(fmt.Sprintf("%s is not a directory", c.TokenDir), "token_dir")
		}
	}
	names := map[string]int{}
	endpoints := map[string]int{}
	for i := range c.Servers {
		s := &c.Servers[i]
		s.line = lineOf(v.root, "servers", i)
		v.checkServer(s, i)
		v.checkPerUser(c, s, i)
		v.checkTokenExchangeAuth(c, s, i)
		if s.perClient() && c.Stateless {
			v.fail("per_client needs client sessions, which a stateless gateway has none of: use shared, or stateless: false", "servers", i, "upstream_sessions")
		}
		if j, dup := names[s.Name]; dup && s.Name != "" {
			v.fail(fmt.Sprintf("%q is already the name of servers[%d]", s.Name, j), "servers", i, "name")
		} else {
			names[s.Name] = i
		}
		if j, dup := endpoints[s.endpoint]; dup && s.endpoint != "" {
			v.fail(fmt.Sprintf("servers[%d] already connects there", j), "servers", i, serverKey(s))
		} else {
			endpoints[s.endpoint] = i
		}
	}
	v.checkOpenAPI(c, names)
}

// Bounds of the numbers a configuration may give: past them a value is a
// mistake (a typo, a unit confused), not a wish.
const (
	maxSessionCallsLimit = 10_000
	maxSessionsLimit     = 1 << 20
	maxConcurrencyLimit  = 10_000
	maxResultBytesLimit  = 1 << 30 // 1 GiB
	maxDuration          = 7 * 24 * time.Hour
)

// maxUpstreamSessionsLimit bounds max_upstream_sessions: each may be a
// process.
const maxUpstreamSessionsLimit = 10_000

// isLoopback reports whether addr (host:port) listens on loopback only:
// localhost or a loopback IP. An empty host or an unspecified address
// (0.0.0.0, ::) listens everywhere.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkServing checks the fields about how the gateway serves: the
// startup wait and metrics.
func (v *validator) checkServing(c *Config) {
	if c.MaxSessionCalls < -1 || c.MaxSessionCalls > maxSessionCallsLimit {
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d, or -1 for no limit", c.MaxSessionCalls, maxSessionCallsLimit), "max_session_calls")
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{{"idle_timeout", c.IdleTimeout}, {"read_timeout", c.ReadTimeout}} {
		if d.val < 0 || d.val > 24*time.Hour {
			v.fail(fmt.Sprintf("%v is out of range: use 1ms to 24h (0 or absent: the default)", d.val), d.key)
		} else if d.val > 0 && d.val < time.Millisecond {
			v.fail(fmt.Sprintf("%v is out of range: use 1ms to 24h (0 or absent: the default)", d.val), d.key)
		}
	}
	for _, n := range []struct {
		key string
		val int
	}{{"max_sessions", c.MaxSessions}, {"max_sessions_per_principal", c.MaxSessionsPerPrincipal}} {
		if n.val < 0 || n.val > maxSessionsLimit {
			v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (0 or absent: the default)", n.val, maxSessionsLimit), n.key)
		}
	}
	if c.SessionTimeout > maxDuration {
		v.fail(fmt.Sprintf("%v is out of range: at most %v", c.SessionTimeout, maxDuration), "session_timeout")
	}
	if c.StartupWait != nil && *c.StartupWait > maxDuration {
		v.fail(fmt.Sprintf("%v is out of range: at most %v", *c.StartupWait, maxDuration), "startup_wait")
	}
	if c.ServerEndpoints && c.Transport == "stdio" {
		v.fail("each upstream's own endpoint is an HTTP path: use transport http", "server_endpoints")
	}
	if c.StartupWait == nil {
		d := defaultStartupWait
		c.StartupWait = &d
	} else if *c.StartupWait < 0 {
		v.fail("must not be negative", "startup_wait")
	}
	if !c.Metrics {
		return
	}
	if c.Transport == "stdio" && c.HealthListen == "" {
		v.fail("with transport stdio, metrics are served on health_listen: set it", "metrics")
	}
	if c.Path == metricsPath {
		v.fail(fmt.Sprintf("%q is where metrics are served", c.Path), "path")
	}
}

// serverKey names the field that gives a server's endpoint.
func serverKey(s *Server) string {
	if len(s.Command) > 0 {
		return "command"
	}
	return "url"
}

func (v *validator) checkServer(s *Server, i int) {
	at := func(path ...any) []any { return append([]any{"servers", i}, path...) }
	switch {
	case s.Name == "":
		v.fail("missing: every server needs a name (its namespace)", at("name")...)
	case !namespacePattern.MatchString(s.Name):
		v.fail(fmt.Sprintf("%q is not a namespace: use letters, digits, '_' and '-' (no '.')", s.Name), at("name")...)
	case slices.Contains(toolkit.ReservedNamespaces, s.Name):
		v.fail(fmt.Sprintf("%q is reserved", s.Name), at("name")...)
	}

	if _, err := toolkit.NewExtensions(s.Extensions); err != nil {
		v.fail(err.Error(), at("extensions")...)
	}

	switch {
	case s.URL != "" && len(s.Command) > 0:
		v.fail("give url or command, not both", at("command")...)
	case s.URL != "":
		v.checkURL(s, at)
	case len(s.Command) > 0:
		v.checkCommand(s, at)
	default:
		v.fail("missing: give the server's url or command", at()...)
	}

	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		value := s.Headers[name]
		if name == "" || strings.ContainsAny(name, " :\r\n") {
			v.fail(fmt.Sprintf("%q is not a header name", name), at("headers")...)
			continue
		}
		s.Headers[name] = v.expand(value, at("headers", name)...)
	}

	for _, d := range []struct {
		key string
		val time.Duration
	}{{"connect", s.Timeouts.Connect}, {"call", s.Timeouts.Call}, {"reconnect", s.Timeouts.Reconnect}, {"backoff_max", s.Timeouts.BackoffMax}} {
		if d.val < 0 {
			v.fail("must not be negative", at("timeouts", d.key)...)
		} else if d.val > maxDuration {
			v.fail(fmt.Sprintf("%v is out of range: at most %v", d.val, maxDuration), at("timeouts", d.key)...)
		}
	}
	if s.MaxConcurrency < 0 {
		v.fail("must not be negative", at("max_concurrency")...)
	} else if s.MaxConcurrency > maxConcurrencyLimit {
		v.fail(fmt.Sprintf("%d is out of range: use 0 (no limit) to %d", s.MaxConcurrency, maxConcurrencyLimit), at("max_concurrency")...)
	}
	v.checkOAuth(s, i)
	v.checkUpstreamSessions(s, at)
	if s.MaxResultBytes < 0 {
		v.fail("must not be negative", at("max_result_bytes")...)
	} else if s.MaxResultBytes > maxResultBytesLimit {
		v.fail(fmt.Sprintf("%d is out of range: use 0 (no limit) to %d", s.MaxResultBytes, int64(maxResultBytesLimit)), at("max_result_bytes")...)
	}
	if n := s.MaxListItems; n < 0 || n > mcp.DefaultMaxListItems {
		v.fail(fmt.Sprintf("%d is out of range: use 0 (the default) to %d", n, mcp.DefaultMaxListItems), at("max_list_items")...)
	}
	if n := s.MaxListBytes; n != 0 && (n < 1024 || n > mcp.DefaultMaxListBytes) {
		v.fail(fmt.Sprintf("%d is out of range: use 0 (the default) or 1024 to %d", n, mcp.DefaultMaxListBytes), at("max_list_bytes")...)
	}
	for _, list := range []struct {
		key      string
		patterns []string
	}{{"allow", s.Tools.Allow}, {"deny", s.Tools.Deny}} {
		for j, p := range list.patterns {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				v.fail(fmt.Sprintf("%q is not a glob pattern", p), at("tools", list.key, j)...)
			}
		}
	}
}

func (v *validator) checkURL(s *Server, at func(...any) []any) {
	if len(s.Env) > 0 || s.Dir != "" {
		v.fail("env and dir go with command, not url", at("url")...)
	}
	u, err := url.Parse(s.URL)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // without the URL it quotes, which may hold a secret
	}
	if err != nil {
		v.fail(fmt.Sprintf("not a URL: %v", err), at("url")...)
		return
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			v.fail(fmt.Sprintf("%q has no host", toolkit.RedactURL(s.URL)), at("url")...)
			return
		}
	case mcp.StdioScheme:
		if _, err := mcp.ParseStdioURL(s.URL); err != nil {
			v.fail(err.Error(), at("url")...)
			return
		}
		if len(s.Headers) > 0 {
			v.fail("headers go with http(s) URLs", at("headers")...)
		}
	default:
		v.fail(fmt.Sprintf("%q: use an http, https or stdio URL, or command", toolkit.RedactURL(s.URL)), at("url")...)
		return
	}
	s.endpoint = s.URL
}

func (v *validator) checkCommand(s *Server, at func(...any) []any) {
	if len(s.Headers) > 0 {
		v.fail("headers go with http(s) URLs", at("headers")...)
	}
	prog := s.Command[0]
	switch {
	case prog == "":
		v.fail("the program is empty", at("command", 0)...)
		return
	case strings.ContainsRune(prog, '/') || strings.ContainsRune(prog, filepath.Separator):
		prog = v.abs(prog) // a path, relative to this file
	}
	cmd := mcp.StdioCommand{Path: prog, Args: s.Command[1:], Dir: v.abs(s.Dir)}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if k == "" || strings.ContainsRune(k, '=') {
			v.fail(fmt.Sprintf("%q is not a variable name", k), at("env")...)
			return
		}
		cmd.Env = append(cmd.Env, k+"="+s.Env[k])
	}
	u := cmd.String()
	if _, err := mcp.ParseStdioURL(u); err != nil {
		v.fail(err.Error(), at("command")...)
		return
	}
	s.endpoint = u
}

// checkUpstreamSessions checks upstream_sessions and the keys that go
// with per_client, and sets the default of max_upstream_sessions.
func (v *validator) checkUpstreamSessions(s *Server, at func(...any) []any) {
	switch s.UpstreamSessions {
	case "":
		s.UpstreamSessions = upstreamShared
	case upstreamShared, upstreamPerClient:
	default:
		v.fail(fmt.Sprintf("%q: use %s or %s", s.UpstreamSessions, upstreamShared, upstreamPerClient), at("upstream_sessions")...)
		return
	}
	switch {
	case s.MaxUpstreamSessions != 0 && !s.perClient():
		v.fail("goes with upstream_sessions: per_client", at("max_upstream_sessions")...)
	case s.MaxUpstreamSessions < 0 || s.MaxUpstreamSessions > maxUpstreamSessionsLimit:
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (default %d)", s.MaxUpstreamSessions, maxUpstreamSessionsLimit, mcp.DefaultMaxClientSessions), at("max_upstream_sessions")...)
	case s.perClient() && s.MaxUpstreamSessions == 0:
		s.MaxUpstreamSessions = mcp.DefaultMaxClientSessions
	}
	switch n := s.MaxUpstreamSessionsPerPrincipal; {
	case n != 0 && !s.perClient():
		v.fail("goes with upstream_sessions: per_client", at("max_upstream_sessions_per_principal")...)
	case n < 0 || n > maxUpstreamSessionsLimit:
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (default %d)", n, maxUpstreamSessionsLimit, mcp.DefaultMaxClientSessionsPerPrincipal), at("max_upstream_sessions_per_principal")...)
	case n > s.MaxUpstreamSessions && s.MaxUpstreamSessions > 0:
		v.fail(fmt.Sprintf("%d is more than max_upstream_sessions (%d)", n, s.MaxUpstreamSessions), at("max_upstream_sessions_per_principal")...)
	}
	switch d := s.UpstreamIdleTimeout; {
	case d != 0 && !s.perClient():
		v.fail("goes with upstream_sessions: per_client", at("upstream_idle_timeout")...)
	case d < 0 || d > maxDuration:
		v.fail(fmt.Sprintf("%v is out of range: at most %v (default %v)", d, maxDuration, mcp.DefaultClientSessionIdle), at("upstream_idle_timeout")...)
	}
}
