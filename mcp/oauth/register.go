package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Dynamic client registration (RFC 7591) is the SDK's: its handler
// registers the client when the authorization server offers it and no
// client ID metadata document or pre-registered client applies. It would
// register again at each authorization, without a
// token_endpoint_auth_method (so the server assumes client_secret_basic,
// which many do not support). The handler's HTTP client therefore
// answers the SDK's registration requests itself when it holds a
// registration for the authorization server and redirect URI (from its
// store, or made earlier), and otherwise sends the request with the
// authentication method chosen from the server's metadata, and keeps
// what the server answers. A registration is dropped when the server
// rejects the client (invalid_client) or the registration expires.

// Registration limits.
const (
	// maxRegistrationBody bounds the registration request read (the SDK's
	// own, a few hundred bytes) and the answer kept.
	maxRegistrationBody = 1 << 20
	// registrationMargin is how long before its secret expires a
	// registration is replaced.
	registrationMargin = time.Minute
)

// registrar keeps the dynamic registrations of a Handler's client.
type registrar struct {
	h        *Handler
	redirect string            // the redirect URI registered
	store    RegistrationStore // nil: memory only

	mu  sync.Mutex
	mem map[string]*StoredRegistration // by issuer, without a store
}

// newRegistrar returns the registrar of h for redirect.
func newRegistrar(h *Handler, redirect string, store TokenStore) *registrar {
	r := &registrar{h: h, redirect: redirect, mem: map[string]*StoredRegistration{}}
	if rs, ok := store.(RegistrationStore); ok {
		r.store = rs
	}
	return r
}

// publicClient reports whether a client with redirect URI redirect is a
// public one (RFC 8252: a native application, such as a command-line
// program, which cannot keep a secret): a loopback http(s) URI or a
// private-use scheme.
func publicClient(redirect string) bool {
	u, err := url.Parse(redirect)
	if err != nil {
		return false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return u.Scheme != ""
	}
	return isLoopbackHost(u.Hostname())
}

// chooseAuthMethod chooses how a client authenticates at the token
// endpoint of a server that supports the methods listed: none (with PKCE)
// for a public client when the server accepts it or names nothing, else
// client_secret_post, else client_secret_basic, when listed; "" (the
// server's default) when none of them is.
func chooseAuthMethod(supported []string, public bool) string {
	if public && (len(supported) == 0 || slices.Contains(supported, "none")) {
		return "none"
	}
	for _, m := range []string{"client_secret_post", "client_secret_basic"} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return ""
}

// usable reports whether reg can be used at now.
func (r *StoredRegistration) usable(now time.Time) bool {
	return r != nil && r.ClientID != "" && (r.SecretExpiresAt.IsZero() || now.Add(registrationMargin).Before(r.SecretExpiresAt))
}

// load returns the registration kept for issuer, or nil.
func (r *registrar) load(ctx context.Context, issuer string) *StoredRegistration {
	r.mu.Lock()
	reg := r.mem[issuer]
	r.mu.Unlock()
	if reg == nil && r.store != nil {
		var err error
		if reg, err = r.store.LoadRegistration(ctx, issuer, r.redirect); err != nil {
			r.h.logger.Warn("could not load the stored OAuth client registration", "error", err)
			return nil
		}
	}
	if !reg.usable(r.h.clock.Now()) {
		return nil
	}
	return reg
}

// keep keeps reg.
func (r *registrar) keep(ctx context.Context, reg *StoredRegistration) {
	r.mu.Lock()
	r.mem[reg.Issuer] = reg
	r.mu.Unlock()
	if r.store != nil {
		if err := r.store.SaveRegistration(ctx, reg); err != nil {
			r.h.logger.Warn("could not store the OAuth client registration", "error", err)
		}
	}
}

// forget drops the registration of clientID at issuer: the server no
// longer knows the client.
func (r *registrar) forget(ctx context.Context, issuer, clientID string) {
	if r == nil || clientID == "" {
		return
	}
	r.mu.Lock()
	if reg := r.mem[issuer]; reg != nil && reg.ClientID == clientID {
		delete(r.mem, issuer)
	}
	r.mu.Unlock()
	if r.store != nil {
		if err := r.store.DeleteRegistration(ctx, issuer, r.redirect, clientID); err != nil {
			r.h.logger.Warn("could not forget the OAuth client registration", "error", err)
		}
	}
	r.h.logger.Info("OAuth client registration dropped: the authorization server rejects the client", "issuer", issuer, "client_id", clientID)
}

// registrationAnswer is what the registrar reads of, and writes in, a
// registration answer.
type registrationAnswer struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   int64    `json:"client_secret_expires_at,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
}

// register handles the SDK's registration request req, for the
// authorization server of meta (nil: its metadata is unknown, as with
// the 2025-03-26 default endpoints): a registration kept answers it; else
// it goes to the server with the authentication method chosen, and the
// registration is kept.
func (r *registrar) register(base http.RoundTripper, req *http.Request, meta *authServerMetadata) (*http.Response, error) {
	ctx := req.Context()
	issuer, methods := originOf(req.URL), []string(nil)
	if meta != nil {
		issuer, methods = meta.Issuer, meta.AuthMethods
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRegistrationBody))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if reg := r.load(ctx, issuer); reg != nil {
		r.h.logger.Debug("OAuth client registration reused", "issuer", issuer, "client_id", reg.ClientID)
		return r.answer(req, reg), nil
	}
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err == nil && fields != nil {
		if m, _ := fields["token_endpoint_auth_method"].(string); m == "" {
			if m = chooseAuthMethod(methods, publicClient(r.redirect)); m != "" {
				fields["token_endpoint_auth_method"] = m
				if b, err := json.Marshal(fields); err == nil {
					body = b
				}
			}
		}
	}
	asked, _ := fields["token_endpoint_auth_method"].(string)
	out := req.Clone(ctx)
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := base.RoundTrip(out)
	if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated) {
		return resp, err
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxRegistrationBody))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	var got registrationAnswer
	if json.Unmarshal(answer, &got) != nil || got.ClientID == "" {
		return resp, nil // the SDK says what is wrong with it
	}
	if got.TokenEndpointAuthMethod == "" {
		// The server took the method asked for, or its default
		// (client_secret_basic, RFC 7591 §2) when none was asked.
		got.TokenEndpointAuthMethod = asked
		if asked == "" {
			got.TokenEndpointAuthMethod = "client_secret_basic"
		}
		var all map[string]any
		if json.Unmarshal(answer, &all) == nil {
			all["token_endpoint_auth_method"] = got.TokenEndpointAuthMethod
			if b, err := json.Marshal(all); err == nil {
				answer = b
			}
		}
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		resp.ContentLength = int64(len(answer))
		resp.Header = resp.Header.Clone()
		resp.Header.Del("Content-Length")
	}
	reg := &StoredRegistration{
		Issuer:                  issuer,
		RedirectURI:             r.redirect,
		ClientID:                got.ClientID,
		ClientSecret:            got.ClientSecret,
		TokenEndpointAuthMethod: got.TokenEndpointAuthMethod,
	}
	if got.ClientSecretExpiresAt > 0 {
		reg.SecretExpiresAt = time.Unix(got.ClientSecretExpiresAt, 0).UTC()
	}
	r.keep(context.WithoutCancel(ctx), reg)
	r.h.logger.Info("OAuth client registered", "issuer", issuer, "client_id", reg.ClientID, "token_endpoint_auth_method", reg.TokenEndpointAuthMethod)
	return resp, nil
}

// answer is the registration answer to req that reg makes.
func (r *registrar) answer(req *http.Request, reg *StoredRegistration) *http.Response {
	a := registrationAnswer{
		ClientID:                reg.ClientID,
		ClientSecret:            reg.ClientSecret,
		TokenEndpointAuthMethod: reg.TokenEndpointAuthMethod,
		RedirectURIs:            []string{reg.RedirectURI},
	}
	if !reg.SecretExpiresAt.IsZero() {
		a.ClientSecretExpiresAt = reg.SecretExpiresAt.Unix()
	}
	body, _ := json.Marshal(a)
	resp := jsonResponse(req, body)
	resp.StatusCode, resp.Status = http.StatusCreated, "201 Created"
	return resp
}

// originOf returns scheme://host of u.
func originOf(u *url.URL) string {
	return u.Scheme + "://" + u.Host
}

// isRegistration reports whether req is a dynamic registration request:
// the only JSON POST of the flow (token requests are forms).
func isRegistration(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasPrefix(strings.ToLower(req.Header.Get("Content-Type")), "application/json")
}
