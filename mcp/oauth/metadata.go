package oauth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/internal/errs"
)

// ProtectedResourceMetadataPath is the well-known path of the metadata of
// an OAuth protected resource (RFC 9728).
const ProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ProtectedResourceMetadataURL returns where the metadata of the protected
// resource identified by resource (the absolute URL of an MCP endpoint)
// is served: the well-known path inserted between the host and the
// resource's path (RFC 9728 §3.1), as in
// https://mcp.example.com/.well-known/oauth-protected-resource/mcp.
func ProtectedResourceMetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return "", err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http(s) URL", resource)
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("%q has a fragment", resource)
	}
	u.Path = ProtectedResourceMetadataPath + strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// ProtectedResourceMetadataPaths returns the URL paths at which
// [HandleProtectedResourceMetadata] serves the metadata of resource: the
// well-known path and, when the resource has a path, its form with that
// path appended. An invalid resource gives an error wrapping
// toolkit.ErrBadParameter.
func ProtectedResourceMetadataPaths(resource string) ([]string, error) {
	full, err := ProtectedResourceMetadataURL(resource)
	if err != nil {
		return nil, fmt.Errorf("%w: protected resource metadata: %v", errs.ErrBadParameter, err)
	}
	u, _ := url.Parse(full)
	if u.Path == ProtectedResourceMetadataPath {
		return []string{u.Path}, nil
	}
	return []string{ProtectedResourceMetadataPath, u.Path}, nil
}

// HandleProtectedResourceMetadata serves meta (with the go-sdk's
// auth.ProtectedResourceMetadataHandler, CORS allowed) on mux at the
// well-known path and at its form with the resource's path appended
// (RFC 9728 §3.1), so that clients find it either way. meta.Resource must
// be the absolute URL of the protected resource.
func HandleProtectedResourceMetadata(mux *http.ServeMux, meta *oauthex.ProtectedResourceMetadata) error {
	if meta == nil {
		return fmt.Errorf("%w: nil protected resource metadata", errs.ErrBadParameter)
	}
	paths, err := ProtectedResourceMetadataPaths(meta.Resource)
	if err != nil {
		return err
	}
	h := auth.ProtectedResourceMetadataHandler(meta)
	for _, p := range paths {
		mux.Handle(p, h)
	}
	return nil
}
