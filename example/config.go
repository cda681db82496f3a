package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// Config is the gateway's configuration file; example/gateway.yaml shows
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
	// MaxSessionCalls is how many calls one client session may have in
	// flight; more are refused (default 64; -1 for no limit).
	MaxSessionCalls int `yaml:"max_session_calls"`
	// SSEPath also serves the legacy HTTP+SSE transport (protocol version
	// 2024-11-05) at this URL path, for old clients ("" for none).
	SSEPath string `yaml:"sse_path"`
	// QualifiedNames exposes every item under namespace_name, even when its
	// bare name is unique.
	QualifiedNames bool `yaml:"qualified_names"`
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
	// Auth makes MCP clients authenticate (transport http); none by
	// default.
	Auth *Auth `yaml:"auth"`
	// TokenDir keeps the OAuth tokens of upstreams authorized by a person
	// (oauth grant authorization_code), one file per upstream, readable by
	// the gateway's user only; "" keeps them in memory (the person
	// authorizes again after each restart).
	TokenDir string `yaml:"token_dir"`
	// Servers are the upstream MCP servers.
	Servers []Server `yaml:"servers"`
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
	// further calls wait for a slot (mcp.OptMaxConcurrency). 0: no limit.
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxResultBytes refuses tool results, prompts and resource reads
	// larger than this many bytes (mcp.OptMaxResultBytes). 0: no limit.
	MaxResultBytes int64 `yaml:"max_result_bytes"`
	// OAuth authorizes the gateway to a server that asks for OAuth.
	OAuth *OAuth `yaml:"oauth"`

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

// Endpoint returns the URL the gateway connects to.
func (s Server) Endpoint() string { return s.endpoint }

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
	return &cfg, nil
}

// yamlLine matches the position yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// unknownField matches yaml.v3's message for a field KnownFields refused.
var unknownField = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)

// cannotUnmarshal matches yaml.v3's message for a value of the wrong type:
// the node's tag, its value (cut to 7 bytes and "..." when longer than 10;
// absent for lists and mappings) and the Go type.
var cannotUnmarshal = regexp.MustCompile("^cannot unmarshal (\\S+)(?: `(.*)`)? into (\\S+)$")

// yamlError rewrites a yaml.v3 error as "file:line: field: message" lines.
// root is the parsed document (nil for a syntax error), in which the field
// is found from the line and the value the message gives.
func yamlError(file string, root *yaml.Node, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make([]error, 0, len(msgs))
	used := map[*yaml.Node]bool{} // two bad values alike on one line are two fields
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		where, line := file, 0
		if sub := yamlLine.FindStringSubmatch(m); sub != nil {
			where, m = file+":"+sub[1], sub[2]
			line, _ = strconv.Atoi(sub[1])
		}
		if sub := unknownField.FindStringSubmatch(m); sub != nil {
			if path, ok := findKey(root, line, sub[1]); ok {
				m = fieldName(path) + ": unknown field"
			} else {
				m = fmt.Sprintf("unknown field %q", sub[1])
			}
			if known := yamlFields(sub[2]); known != "" {
				m += " (known: " + known + ")"
			}
		} else if sub := cannotUnmarshal.FindStringSubmatch(m); sub != nil {
			if path, n, ok := findValue(root, line, sub[1], sub[2], used); ok {
				used[n] = true
				m = fmt.Sprintf("%s: cannot use %s as %s", fieldName(path), describeNode(n), describeType(sub[3]))
			}
		}
		out = append(out, fmt.Errorf("%s: %s", where, m))
	}
	return errors.Join(out...)
}

// configTypes are the configuration's types, by the Go name yaml.v3 gives
// them.
var configTypes = map[string]any{
	"main.Config": Config{}, "main.Server": Server{}, "main.Timeouts": Timeouts{},
	"main.ToolFilter": ToolFilter{}, "main.Auth": Auth{}, "main.BearerAuth": BearerAuth{},
	"main.JWTAuth": JWTAuth{}, "main.OAuth": OAuth{},
}

// yamlFields lists the fields of one of the configuration's types, by
// the Go name yaml.v3 gives it.
func yamlFields(goType string) string {
	v, ok := configTypes[goType]
	if !ok {
		return ""
	}
	var names []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// walkYAML calls fn for every value node of the document under root, with
// its path (mapping keys and sequence indexes) and, for a mapping value,
// its key node. It stops when fn returns false.
func walkYAML(root *yaml.Node, fn func(path []any, key, n *yaml.Node) bool) {
	if root == nil {
		return
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	var walk func(path []any, key, n *yaml.Node) bool
	walk = func(path []any, key, n *yaml.Node) bool {
		if !fn(path, key, n) {
			return false
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if !walk(append(slices.Clip(path), k.Value), k, n.Content[i+1]) {
					return false
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if !walk(append(slices.Clip(path), i), nil, c) {
					return false
				}
			}
		}
		return true
	}
	walk(nil, nil, n)
}

// findKey returns the path of the mapping key name on line.
func findKey(root *yaml.Node, line int, name string) (found []any, ok bool) {
	walkYAML(root, func(path []any, key, _ *yaml.Node) bool {
		if key != nil && key.Line == line && key.Value == name {
			found, ok = path, true
		}
		return !ok
	})
	return found, ok
}

// findValue returns the path and node of the value on line that yaml.v3
// described by tag and value (see cannotUnmarshal), skipping those in
// used: the deepest, as a mapping or list holds the bad value rather than
// is it, and the first of those in the document's order.
func findValue(root *yaml.Node, line int, tag, value string, used map[*yaml.Node]bool) (found []any, node *yaml.Node, ok bool) {
	walkYAML(root, func(path []any, _, n *yaml.Node) bool {
		if n.Line != line || used[n] || n.ShortTag() != tag && n.Tag != tag || ok && len(path) <= len(found) {
			return true
		}
		switch n.Kind {
		case yaml.ScalarNode:
			if cut, short := strings.CutSuffix(value, "..."); n.Value != value && !(short && strings.HasPrefix(n.Value, cut)) {
				return true
			}
		case yaml.MappingNode, yaml.SequenceNode:
		default:
			return true
		}
		found, node, ok = path, n, true
		return true
	})
	return found, node, ok
}

// describeNode names a YAML value in a message.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// describeType names, in a message, the Go type a value must fit.
func describeType(goType string) string {
	switch goType {
	case "time.Duration", "*time.Duration":
		return "a duration (like 30s or 1m30s)"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64", "uint", "uint64":
		return "a whole number"
	case "[]string":
		return "a list of strings"
	case "map[string]string":
		return "a mapping of strings"
	case "main.ToolFilter", "main.Timeouts", "main.Server", "main.Config",
		"main.Auth", "main.BearerAuth", "main.JWTAuth", "main.OAuth",
		"*main.Auth", "*main.BearerAuth", "*main.JWTAuth", "*main.OAuth":
		return "a mapping of fields"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a list"
	}
	return goType
}

// validator checks a decoded configuration and fills in its defaults and
// derived values.
type validator struct {
	file string
	root *yaml.Node
	dir  string // the file's directory, for relative paths
	errs []error
}

// fail records a problem with the field at path (keys and indexes).
func (v *validator) fail(msg string, path ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s:%d: %s: %s", v.file, lineOf(v.root, path...), fieldName(path), msg))
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

func (v *validator) check(c *Config) {
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
	v.checkServing(c)
	v.checkAuth(c)
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
}

// checkServing checks the fields about how the gateway serves: the
// startup wait and metrics.
func (v *validator) checkServing(c *Config) {
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
		var missing []string
		s.Headers[name] = os.Expand(value, func(key string) string {
			val, ok := os.LookupEnv(key)
			if !ok {
				missing = append(missing, key)
			}
			return val
		})
		if len(missing) > 0 {
			v.fail(fmt.Sprintf("environment variable %s is not set", strings.Join(missing, ", ")), at("headers", name)...)
		}
	}

	for _, d := range []struct {
		key string
		val time.Duration
	}{{"connect", s.Timeouts.Connect}, {"call", s.Timeouts.Call}, {"reconnect", s.Timeouts.Reconnect}, {"backoff_max", s.Timeouts.BackoffMax}} {
		if d.val < 0 {
			v.fail("must not be negative", at("timeouts", d.key)...)
		}
	}
	if s.MaxConcurrency < 0 {
		v.fail("must not be negative", at("max_concurrency")...)
	}
	v.checkOAuth(s, i)
	if s.MaxResultBytes < 0 {
		v.fail("must not be negative", at("max_result_bytes")...)
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
	if err != nil {
		v.fail(fmt.Sprintf("not a URL: %v", err), at("url")...)
		return
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			v.fail(fmt.Sprintf("%q has no host", s.URL), at("url")...)
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
		v.fail(fmt.Sprintf("%q: use an http, https or stdio URL, or command", s.URL), at("url")...)
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

// lineOf returns the line of the node at path (mapping keys and sequence
// indexes) in the document root, or of its nearest ancestor present.
func lineOf(root *yaml.Node, path ...any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			if n.Kind != yaml.SequenceNode || k < 0 || k >= len(n.Content) {
				return line
			}
			n = n.Content[k]
			line = n.Line
		}
	}
	return line
}

// fieldName spells a path as a field reference: servers[1].url.
func fieldName(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		}
	}
	if b.Len() == 0 {
		return "(top)"
	}
	return b.String()
}
