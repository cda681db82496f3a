package mcp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// jwtServer is an MCP server behind bearer tokens whose authorization
// server grants client credentials to a client that authenticates with a
// private_key_jwt assertion (RFC 7523) signed by pub's key.
type jwtServer struct {
	*protectedServer
	pub      crypto.PublicKey
	clientID string

	mu      sync.Mutex
	jtis    map[string]bool
	refused []string // why token requests were refused
}

func newJWTServer(t *testing.T, clientID string, pub crypto.PublicKey) *jwtServer {
	t.Helper()
	s := &jwtServer{protectedServer: newProtectedServer(t, "protected"), pub: pub, clientID: clientID, jtis: map[string]bool{}}
	s.serve("/mcp", false, &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{"/as"}})
	s.mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                s.URL + "/as",
			"token_endpoint":                        s.URL + "/as/token",
			"grant_types_supported":                 []string{"client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"private_key_jwt"},
		})
	})
	s.mux.HandleFunc("POST /as/token", s.serveToken)
	return s
}

func (s *jwtServer) serveToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	refuse := func(why string) {
		s.refused = append(s.refused, why)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
	}
	if err := r.ParseForm(); err != nil {
		refuse(err.Error())
		return
	}
	switch {
	case r.Header.Get("Authorization") != "":
		refuse("an Authorization header")
		return
	case r.PostForm.Has("client_secret"):
		refuse("a client secret")
		return
	case r.PostForm.Get("grant_type") != "client_credentials":
		refuse("grant_type " + r.PostForm.Get("grant_type"))
		return
	case r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
		refuse("client_assertion_type " + r.PostForm.Get("client_assertion_type"))
		return
	}
	tok, err := jwt.ParseSigned(r.PostForm.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
	if err != nil {
		refuse(err.Error())
		return
	}
	var c jwt.Claims
	if err := tok.Claims(s.pub, &c); err != nil {
		refuse(err.Error())
		return
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: s.clientID, Subject: s.clientID, AnyAudience: jwt.Audience{s.URL + "/as"}, Time: time.Now()}, 0); err != nil {
		refuse(err.Error())
		return
	}
	if c.Expiry == nil || c.ID == "" || s.jtis[c.ID] {
		refuse("no expiry, or no or a reused jti")
		return
	}
	s.jtis[c.ID] = true
	access := fmt.Sprintf("secret-access-%d", len(s.jtis))
	s.grant(access)
	// Expiring at once: every use of the token asks for a new one.
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 1})
}

// TestOAuthClientCredentialsJWT: the connector gets its tokens with client
// assertions signed by its key (iss and sub its client ID, aud the issuer,
// a new jti each time, an expiry), never a secret; keys of both kinds
// read from PEM work; no token appears in the logs or the state.
func TestOAuthClientCredentialsJWT(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		pem []byte
		pub crypto.PublicKey
		alg string
	}{
		"ES256 PKCS8":       {pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), &ecKey.PublicKey, "ES256"},
		"RSA PKCS1 default": {pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}), &rsaKey.PublicKey, ""},
	} {
		t.Run(name, func(t *testing.T) {
			key, err := oauth.ParsePrivateKeyPEM(tc.pem)
			if err != nil {
				t.Fatal(err)
			}
			s := newJWTServer(t, "client-jwt", tc.pub)
			logs := newLogCapture()
			r := start(t, s.URL+"/mcp", false, OptOAuth(oauth.ClientCredentialsJWT("client-jwt", key, tc.alg)), OptLogger(slogNew(logs)))
			ctx := context.Background()
			for range 2 {
				if err := callEcho(t, ctx, r); err != nil {
					t.Fatalf("call: %v", err)
				}
			}
			state := r.State()
			r.stop(t)
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.refused) > 0 || len(s.jtis) < 2 {
				t.Fatalf("%d assertions accepted, refused: %q", len(s.jtis), s.refused)
			}
			for _, rec := range append(logs.all(), fmt.Sprintf("%+v", state)) {
				if strings.Contains(rec, "secret-") || strings.Contains(rec, "eyJ") {
					t.Errorf("a token leaked: %s", rec)
				}
			}
		})
	}
}

// TestOAuthClientCredentialsJWTOptions: keys and algorithms that do not go
// together, and bad PEM, are refused with ErrBadParameter.
func TestOAuthClientCredentialsJWTOptions(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, opt := range map[string]Option{
		"no client ID":     OptOAuth(oauth.ClientCredentialsJWT("", ecKey, "")),
		"no key":           OptOAuth(oauth.ClientCredentialsJWT("c", nil, "")),
		"RS256 and EC key": OptOAuth(oauth.ClientCredentialsJWT("c", ecKey, "RS256")),
		"unknown alg":      OptOAuth(oauth.ClientCredentialsJWT("c", ecKey, "XX1")),
	} {
		_, err := New("http://127.0.0.1/mcp", "c", "1", opt)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "OptOAuth:") {
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", name, err)
		}
	}
	for name, data := range map[string]string{
		"not PEM":  "hello",
		"bad body": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	} {
		if _, err := oauth.ParsePrivateKeyPEM([]byte(data)); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%s: ParsePrivateKeyPEM = %v, want ErrBadParameter", name, err)
		}
	}
}
