package mcpserver

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// serveMetadata serves meta on mux unless a path of the MCP endpoints is
// one of its own.
func serveMetadata(mux *http.ServeMux, meta *oauthex.ProtectedResourceMetadata, taken ...string) error {
	paths, err := oauth.ProtectedResourceMetadataPaths(meta.Resource)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if slices.Contains(taken, p) {
			return fmt.Errorf("%w: WithProtectedResource: the metadata path %s is an MCP endpoint's", toolkit.ErrBadParameter, p)
		}
	}
	return oauth.HandleProtectedResourceMetadata(mux, meta)
}

// WithProtectedResource makes the HTTP face an OAuth 2.1 protected
// resource described by meta (RFC 9728): ServeListener serves meta at the
// well-known paths (see [oauth.HandleProtectedResourceMetadata]; with a mux
// of your own, call that function), and the 401 and 403 answers of
// WithBearerAuth carry a WWW-Authenticate challenge whose
// resource_metadata parameter points at it, unless its options name
// another ResourceMetadataURL. Give WithBearerAuth too (for JWT access
// tokens, with an [oauth.JWTVerifier]'s Verify); meta.Resource must be the
// absolute URL of the MCP endpoint.
func WithProtectedResource(meta *oauthex.ProtectedResourceMetadata) HTTPOption {
	return func(c *httpConfig) error {
		if meta == nil {
			return fmt.Errorf("%w: WithProtectedResource: nil metadata", toolkit.ErrBadParameter)
		}
		u, err := oauth.ProtectedResourceMetadataURL(meta.Resource)
		if err != nil {
			return fmt.Errorf("%w: WithProtectedResource: Resource: %v", toolkit.ErrBadParameter, err)
		}
		c.prm, c.prmURL = meta, u
		return nil
	}
}

// requireBearer is the bearer-token check of cfg around h: the go-sdk's
// auth.RequireBearerToken, with the resource metadata URL of
// WithProtectedResource, and refusals that carry the RFC 6750 error code
// in their challenge.
func (cfg *httpConfig) requireBearer(h http.Handler) http.Handler {
	opts := cfg.authOpts
	if cfg.prmURL != "" && (opts == nil || opts.ResourceMetadataURL == "") {
		o := auth.RequireBearerTokenOptions{}
		if opts != nil {
			o = *opts
		}
		o.ResourceMetadataURL = cfg.prmURL
		opts = &o
	}
	return challenge(h, auth.RequireBearerToken(rememberBearer(cfg.verifier), opts))
}

// challenge puts next behind the middleware mw, and adds to the
// WWW-Authenticate header of mw's refusals the error code RFC 6750 §3.1
// asks for: invalid_token when a token was sent and refused (401),
// insufficient_scope when it lacks a scope (403). A 401 without any
// challenge gets a bare "Bearer" one.
func challenge(next http.Handler, mw func(http.Handler) http.Handler) http.Handler {
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The token was accepted: serve with the original writer.
		if cw, ok := w.(*challengeWriter); ok {
			w = cw.ResponseWriter
		}
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(&challengeWriter{ResponseWriter: w, sent: r.Header.Get("Authorization") != ""}, r)
	})
}

// challengeWriter completes the challenge of a refusal as it is written.
type challengeWriter struct {
	http.ResponseWriter
	sent bool // the request had an Authorization header
}

func (w *challengeWriter) WriteHeader(code int) {
	var errCode string
	switch {
	case code == http.StatusForbidden:
		errCode = "insufficient_scope"
	case code == http.StatusUnauthorized && w.sent:
		errCode = "invalid_token"
	}
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		h := w.Header()
		c := h.Get("WWW-Authenticate")
		switch {
		case c == "" && errCode == "":
			h.Set("WWW-Authenticate", "Bearer")
		case c == "":
			h.Set("WWW-Authenticate", fmt.Sprintf("Bearer error=%q", errCode))
		case errCode != "":
			h.Set("WWW-Authenticate", fmt.Sprintf("%s, error=%q", c, errCode))
		}
	}
	w.ResponseWriter.WriteHeader(code)
}
