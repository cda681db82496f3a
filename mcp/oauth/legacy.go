package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Servers of the 2025-03-26 MCP authorization spec publish no protected
// resource metadata: their authorization server's metadata is at the root
// well-known location of the MCP server's origin. Some of them name there
// an issuer with a path (https://mcp.example.com/oauth), which the SDK's
// discovery refuses: RFC 8414 §3.3 wants the issuer of the URL the
// metadata was fetched for, the origin. The Handler then authorizes with
// a second SDK handler to which it presents what a current server would
// publish: protected resource metadata naming that issuer, and the same
// metadata at the issuer's own well-known location, where the SDK checks
// it as usual. This happens only when the SDK's discovery found no
// protected resource metadata and the issuer is on the MCP server's
// origin; servers that publish protected resource metadata keep the
// SDK's checks as they are.

const (
	wellKnownPRM  = "/.well-known/oauth-protected-resource"
	wellKnownMeta = "/.well-known/oauth-authorization-server"
)

// legacyDiscovery watches the requests of one authorization by the SDK's
// handler and, when they show a 2025-03-26 server whose metadata names an
// issuer with a path, makes the handler that authorizes with it.
type legacyDiscovery struct {
	base  *http.Client                                     // the client of the authorization requests
	build func(hc *http.Client) (auth.OAuthHandler, error) // an SDK handler on hc

	mu       sync.Mutex
	prmFound bool              // protected resource metadata was found
	origin   string            // of the metadata found at the root well-known location
	meta     []byte            // that metadata
	issuer   string            // and its issuer
	handler  auth.OAuthHandler // once made

	active atomic.Pointer[auth.OAuthHandler] // handler, once it authorized
}

// use makes h the handler of the requests to the resource.
func (l *legacyDiscovery) use(h auth.OAuthHandler) { l.active.Store(&h) }

// issuerOf returns the issuer of the fallback.
func (l *legacyDiscovery) issuerOf() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.issuer
}

// reset forgets what an earlier authorization found.
func (l *legacyDiscovery) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prmFound, l.origin, l.meta, l.issuer = false, "", nil, ""
}

// watch returns hc with a transport that notes what the discovery finds.
func (l *legacyDiscovery) watch(hc *http.Client) *http.Client {
	return wrapClient(hc, l.note)
}

// note is the [middleware] of [legacyDiscovery.watch].
func (l *legacyDiscovery) note(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	switch {
	case strings.HasPrefix(req.URL.Path, wellKnownPRM):
		l.mu.Lock()
		l.prmFound = true
		l.mu.Unlock()
	case req.URL.Path == wellKnownMeta:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var m authServerMetadata
		if len(body) <= maxMetadata && json.Unmarshal(body, &m) == nil {
			l.mu.Lock()
			l.origin, l.meta, l.issuer = req.URL.Scheme+"://"+req.URL.Host, body, m.Issuer
			l.mu.Unlock()
		}
	}
	return resp, nil
}

// fallback returns the handler for a 2025-03-26 server whose metadata
// names an issuer with a path, when the authorization just watched found
// one (resource is the URL of the MCP server), and nil otherwise.
func (l *legacyDiscovery) fallback(resource string) auth.OAuthHandler {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prmFound || l.meta == nil {
		return nil
	}
	ru, err := url.Parse(resource)
	if err != nil || ru.Scheme+"://"+ru.Host != l.origin {
		return nil
	}
	iu, err := url.Parse(l.issuer)
	if err != nil || iu.Scheme+"://"+iu.Host != l.origin || strings.Trim(iu.Path, "/") == "" || iu.RawQuery != "" || iu.Fragment != "" {
		return nil
	}
	if l.handler != nil {
		return l.handler
	}
	serve := &legacyServer{origin: l.origin, issuer: l.issuer, issuerPath: "/" + strings.Trim(iu.Path, "/"), meta: l.meta}
	h, err := l.build(wrapClient(l.base, serve.roundTrip))
	if err != nil { // the configuration made the first handler
		return nil
	}
	l.handler = h
	return h
}

// legacyServer answers the discovery requests of the handler of a
// 2025-03-26 server with the documents a current server would publish.
type legacyServer struct {
	origin     string
	issuer     string
	issuerPath string
	meta       []byte
}

// roundTrip is the [middleware] of the fallback's handler.
func (s *legacyServer) roundTrip(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.Scheme+"://"+req.URL.Host != s.origin {
		return base.RoundTrip(req)
	}
	switch p := req.URL.Path; {
	case p == wellKnownPRM || strings.HasPrefix(p, wellKnownPRM+"/"):
		resource := s.origin + strings.TrimPrefix(p, wellKnownPRM)
		if req.URL.RawQuery != "" {
			resource += "?" + req.URL.RawQuery
		}
		body, err := json.Marshal(map[string]any{"resource": resource, "authorization_servers": []string{s.issuer}})
		if err != nil {
			return nil, err
		}
		return jsonResponse(req, body), nil
	case p == wellKnownMeta+s.issuerPath:
		return jsonResponse(req, s.meta), nil
	}
	return base.RoundTrip(req)
}

// jsonResponse is a 200 response to req with a JSON body.
func jsonResponse(req *http.Request, body []byte) *http.Response {
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
