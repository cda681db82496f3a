package main

import (
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/llmkit/toolkit/openapi"
)

// field is one key of a configuration section and its value.
type field struct{ key, val string }

// userFields are the keys of an openapi scheme that only per_user takes.
func (a OpenAPIAuth) userFields() []field {
	return []field{{"redirect_url", a.RedirectURL}, {"authorization_url", a.AuthorizationURL}, {"token_url", a.TokenURL}}
}

// openAPIUser checks the per_user scheme a, at at, and returns its client
// secret. The scheme's type and flow are the document's: the connector
// checks them when it reads it.
func (v *validator) openAPIUser(c *Config, a OpenAPIAuth, at func(...any) []any) string {
	if a.APIKeyEnv != "" || a.TokenEnv != "" || a.Username != "" || a.PasswordEnv != "" {
		v.fail("per_user goes with client_id, client_secret_env, redirect_url, authorization_url, token_url and scopes: each user's token replaces any secret of the gateway's", at("per_user")...)
	}
	if c.Auth == nil {
		v.fail(perUserNeedsAuth, at("per_user")...)
	}
	if a.ClientID == "" {
		v.fail("missing: per_user needs client_id, the gateway's client registered with the authorization server", at("client_id")...)
	}
	v.checkCallback(c, a.RedirectURL, at)
	for _, f := range a.userFields()[1:] {
		if u, err := url.Parse(f.val); f.val != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "") {
			v.fail(fmt.Sprintf("%q is not an absolute http(s) URL", f.val), at(f.key)...)
		}
	}
	return v.secretEnv(a.ClientSecretEnv, at("client_secret_env")...)
}

// userAuthorizations makes the authorizations of the per_user schemes of
// o, by scheme: their redirects reach the gateway's callback of their
// redirect URL (that of the per_user upstreams when it is the same),
// their tokens go to the gateway's token store, and with a state section
// the replicas share their authorizations in flight.
func (g *gateway) userAuthorizations(o OpenAPI) (map[string]*openapi.UserAuthorization, error) {
	users := map[string]*openapi.UserAuthorization{}
	for _, scheme := range slices.Sorted(maps.Keys(o.userSecrets)) {
		a := o.Auth[scheme]
		cb, err := g.logins.callback(a.RedirectURL)
		if err != nil {
			return nil, fmt.Errorf("auth: %q: redirect_url: %w", scheme, err)
		}
		users[scheme] = &openapi.UserAuthorization{
			ClientID:     a.ClientID,
			ClientSecret: o.userSecrets[scheme],
			AuthURL:      a.AuthorizationURL,
			TokenURL:     a.TokenURL,
			Scopes:       slices.Clone(a.Scopes),
			Callback:     cb,
			Store:        g.tokenStore(o.Name),
			// The tokens of each scheme of each entry are apart.
			Resource: o.endpoint() + "#" + scheme,
			Flights:  g.sharedFlights(),
		}
	}
	return users, nil
}

// closeUsers ends the user authorizations of a, waiting for them.
func (a *api) closeUsers() {
	for _, ua := range a.users {
		ua.Close()
	}
}
