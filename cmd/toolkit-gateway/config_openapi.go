package main

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
)

// OpenAPI is one HTTP API described by an OpenAPI document, served beside
// the MCP servers: one tool per selected operation, under the namespace
// Name (see package openapi).
type OpenAPI struct {
	// Name is the namespace of the API's tools; it is shared with
	// servers[].name.
	Name string `yaml:"name"`
	// Document is the OpenAPI document (3.0 or 3.1, JSON or YAML): an
	// http(s) URL or a file, relative to the configuration file. It is
	// read again on SIGHUP: operations that changed are quarantined when
	// pins_file is set.
	Document string `yaml:"document"`
	// BaseURL replaces the document's servers.
	BaseURL string `yaml:"base_url"`
	// Include keeps only the operations it matches by tag, path glob or
	// operationId glob; Exclude then drops those it matches.
	Include openapi.Selection `yaml:"include"`
	Exclude openapi.Selection `yaml:"exclude"`
	// Auth gives the secrets of the document's security schemes, by
	// scheme name.
	Auth map[string]OpenAPIAuth `yaml:"auth"`
	// Headers are sent with every call; ${VAR} in a value is replaced by
	// the environment variable VAR (for an API whose document declares no
	// security scheme: Authorization: Bearer ${TOKEN}).
	Headers map[string]string `yaml:"headers"`
	// Allow names destinations (origins or hosts) that are loopback or
	// private and may still be called; the document's servers are refused
	// otherwise. base_url's origin is always allowed.
	Allow []string `yaml:"allow"`
	// Timeout bounds one call (default 60s).
	Timeout time.Duration `yaml:"timeout"`
	// MaxResponseBytes bounds a response's body (default 1 MiB).
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxOperations refuses a larger document (default 10,000).
	MaxOperations int `yaml:"max_operations"`

	creds map[string]openapi.Credential // the secrets read, but per_user schemes'
	// userSecrets are the client secrets of the per_user schemes, by
	// scheme ("" for a public client).
	userSecrets map[string]string
	line        int
}

// OpenAPIAuth is the secret of one security scheme: secrets come from
// environment variables (the *_env fields).
type OpenAPIAuth struct {
	// APIKeyEnv names the variable holding an apiKey scheme's key.
	APIKeyEnv string `yaml:"api_key_env"`
	// TokenEnv names the variable holding an http bearer token (or an
	// oauth2 scheme's token).
	TokenEnv string `yaml:"token_env"`
	// Username and PasswordEnv are an http basic scheme's.
	Username    string `yaml:"username"`
	PasswordEnv string `yaml:"password_env"`
	// ClientID and ClientSecretEnv run an oauth2 scheme's client
	// credentials flow at its tokenUrl, asking for Scopes (default: the
	// operation's).
	ClientID        string   `yaml:"client_id"`
	ClientSecretEnv string   `yaml:"client_secret_env"`
	Scopes          []string `yaml:"scopes"`
	// PerUser makes each client's user authorize the scheme's
	// authorization code flow with their own account, the calls carrying
	// that user's token (openapi_peruser.go): the client is ClientID
	// (ClientSecretEnv absent for a public client), the authorization
	// server sends the user back to RedirectURL, and AuthorizationURL and
	// TokenURL replace the flow's authorizationUrl and tokenUrl.
	PerUser          bool   `yaml:"per_user"`
	RedirectURL      string `yaml:"redirect_url"`
	AuthorizationURL string `yaml:"authorization_url"`
	TokenURL         string `yaml:"token_url"`
}

// openAPIScheme is how the connector URL of an OpenAPI entry starts.
const openAPIScheme = "openapi:"

// endpoint returns the connector URL of the entry.
func (o OpenAPI) endpoint() string { return openAPIScheme + o.Name }

// sameAs reports whether o and p describe the same API the same way.
func (o OpenAPI) sameAs(p OpenAPI) bool {
	o.line, p.line = 0, 0
	return reflect.DeepEqual(o, p)
}

// config returns the connector's configuration.
func (o OpenAPI) config() openapi.Config {
	return openapi.Config{
		Document:    o.Document,
		BaseURL:     o.BaseURL,
		Include:     o.Include,
		Exclude:     o.Exclude,
		Credentials: o.creds,
		Headers:     o.Headers,
		Allow:       o.Allow,
		Limits: openapi.Limits{
			MaxResponseBytes: o.MaxResponseBytes,
			MaxOperations:    o.MaxOperations,
			CallTimeout:      o.Timeout,
		},
	}
}

// checkOpenAPI checks the openapi entries and reads their secrets; names
// are the namespaces servers took.
func (v *validator) checkOpenAPI(c *Config, names map[string]int) {
	seen := map[string]int{}
	for i := range c.OpenAPI {
		o := &c.OpenAPI[i]
		at := func(path ...any) []any { return append([]any{"openapi", i}, path...) }
		o.line = lineOf(v.root, "openapi", i)
		switch {
		case o.Name == "":
			v.fail("missing: every openapi entry needs a name (its namespace)", at("name")...)
		case !namespacePattern.MatchString(o.Name):
			v.fail(fmt.Sprintf("%q is not a namespace: use letters, digits, '_' and '-' (no '.')", o.Name), at("name")...)
		case slices.Contains(toolkit.ReservedNamespaces, o.Name):
			v.fail(fmt.Sprintf("%q is reserved", o.Name), at("name")...)
		}
		if j, dup := names[o.Name]; dup {
			v.fail(fmt.Sprintf("%q is already the name of servers[%d]", o.Name, j), at("name")...)
		} else if j, dup := seen[o.Name]; dup {
			v.fail(fmt.Sprintf("%q is already the name of openapi[%d]", o.Name, j), at("name")...)
		} else {
			seen[o.Name] = i
		}
		switch {
		case o.Document == "":
			v.fail("missing: the OpenAPI document (a URL or a file)", at("document")...)
		case strings.HasPrefix(o.Document, "http://") || strings.HasPrefix(o.Document, "https://"):
		default:
			o.Document = v.abs(o.Document)
		}
		if err := o.Include.Check(); err != nil {
			v.fail(err.Error(), at("include")...)
		}
		if err := o.Exclude.Check(); err != nil {
			v.fail(err.Error(), at("exclude")...)
		}
		if o.Timeout < 0 || o.Timeout > maxDuration {
			v.fail(fmt.Sprintf("%s is out of range", o.Timeout), at("timeout")...)
		}
		if o.MaxResponseBytes < 0 || o.MaxResponseBytes > maxResultBytesLimit {
			v.fail(fmt.Sprintf("%d is out of range", o.MaxResponseBytes), at("max_response_bytes")...)
		}
		if o.MaxOperations < 0 {
			v.fail(fmt.Sprintf("%d is out of range", o.MaxOperations), at("max_operations")...)
		}
		for _, name := range slices.Sorted(maps.Keys(o.Headers)) {
			if name == "" || strings.ContainsAny(name, " :\r\n") {
				v.fail(fmt.Sprintf("%q is not a header name", name), at("headers")...)
				continue
			}
			o.Headers[name] = v.expand(o.Headers[name], at("headers", name)...)
		}
		o.creds = map[string]openapi.Credential{}
		for _, scheme := range slices.Sorted(maps.Keys(o.Auth)) {
			a, at := o.Auth[scheme], func(path ...any) []any { return at(append([]any{"auth", scheme}, path...)...) }
			if a.PerUser {
				if o.userSecrets == nil {
					o.userSecrets = map[string]string{}
				}
				o.userSecrets[scheme] = v.openAPIUser(c, a, at)
				continue
			}
			o.creds[scheme] = v.openAPICredential(a, at)
		}
		// The connector checks the rest (base URL, allowed destinations)
		// as it is made.
		if _, err := openapi.New(o.config(), nil); err != nil && o.Name != "" && o.Document != "" {
			v.fail(err.Error(), at()...)
		}
	}
}

// secretEnv returns the value of the environment variable name, failing
// at path when it is not set; "" for no name.
func (v *validator) secretEnv(name string, path ...any) string {
	if name == "" {
		return ""
	}
	val, ok := os.LookupEnv(name)
	if !ok || val == "" {
		v.fail(fmt.Sprintf("environment variable %s is not set", name), path...)
	}
	return val
}

// openAPICredential reads the secrets of one scheme.
func (v *validator) openAPICredential(a OpenAPIAuth, at func(...any) []any) openapi.Credential {
	env := func(name, key string) string { return v.secretEnv(name, at(key)...) }
	c := openapi.Credential{
		APIKey:       env(a.APIKeyEnv, "api_key_env"),
		Token:        env(a.TokenEnv, "token_env"),
		Username:     a.Username,
		Password:     env(a.PasswordEnv, "password_env"),
		ClientID:     a.ClientID,
		ClientSecret: env(a.ClientSecretEnv, "client_secret_env"),
		Scopes:       a.Scopes,
	}
	for _, f := range a.userFields() {
		if f.val != "" {
			v.fail("goes with per_user: true (each user's authorization code flow)", at(f.key)...)
		}
	}
	switch {
	case a.APIKeyEnv == "" && a.TokenEnv == "" && a.Username == "" && a.ClientID == "":
		v.fail("give api_key_env, token_env, username (with password_env), client_id (with client_secret_env) or per_user", at()...)
	case a.ClientID != "" && a.ClientSecretEnv == "":
		v.fail("missing: client_id needs client_secret_env", at("client_secret_env")...)
	case a.PasswordEnv != "" && a.Username == "":
		v.fail("missing: password_env needs username", at("username")...)
	}
	return c
}
