package mcp

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
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
	case r.PostForm.Get("client_assertion_type") != clientAssertionType:
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
			key, err := ParsePrivateKeyPEM(tc.pem)
			if err != nil {
				t.Fatal(err)
			}
			s := newJWTServer(t, "client-jwt", tc.pub)
			logs := newLogCapture()
			r := start(t, s.URL+"/mcp", false, OptOAuthClientCredentialsJWT("client-jwt", key, tc.alg), OptLogger(slogNew(logs)))
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
		"no client ID":     OptOAuthClientCredentialsJWT("", ecKey, ""),
		"no key":           OptOAuthClientCredentialsJWT("c", nil, ""),
		"RS256 and EC key": OptOAuthClientCredentialsJWT("c", ecKey, "RS256"),
		"unknown alg":      OptOAuthClientCredentialsJWT("c", ecKey, "XX1"),
	} {
		_, err := New("http://127.0.0.1/mcp", "c", "1", opt)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "OptOAuthClientCredentialsJWT") {
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", name, err)
		}
	}
	for name, data := range map[string]string{
		"not PEM":  "hello",
		"bad body": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	} {
		if _, err := ParsePrivateKeyPEM([]byte(data)); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%s: ParsePrivateKeyPEM = %v, want ErrBadParameter", name, err)
		}
	}
}

// TestClientAssertionPassThrough: requests that are not token requests of
// the client, large ones included, go out unchanged.
func TestClientAssertionPassThrough(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newClientAssertion("c", ecKey, "")
	if err != nil {
		t.Fatal(err)
	}
	big := "x=" + strings.Repeat("a", 2*maxTokenRequest)
	for name, body := range map[string]string{
		"large form":   big,
		"other secret": url.Values{"grant_type": {"client_credentials"}, "client_secret": {"other"}}.Encode(),
	} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/token", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		got, err := a.rewrite(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := io.ReadAll(got.Body)
		if err != nil || !bytes.Equal(b, []byte(body)) || got.PostForm.Has("client_assertion") {
			t.Errorf("%s: body changed (%d bytes, %v)", name, len(b), err)
		}
	}
	// The stand-in in the Authorization header is replaced by an assertion
	// for the token endpoint when no metadata named the issuer.
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("c", a.standIn)
	got, err := a.rewrite(req)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Authorization") != "" {
		t.Fatal("the Authorization header was kept")
	}
	if err := got.ParseForm(); err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(got.PostForm.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.Claims(&ecKey.PublicKey, &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(jwt.Expected{Issuer: "c", Subject: "c", AnyAudience: jwt.Audience{"http://127.0.0.1/token"}}); err != nil {
		t.Fatal(err)
	}
}

// FuzzParsePrivateKeyPEM checks that no input makes ParsePrivateKeyPEM
// panic, that its errors wrap ErrBadParameter, and that a key it returns
// signs what its public key verifies and makes client assertions (or is
// refused by them with an error).
func FuzzParsePrivateKeyPEM(f *testing.F) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	block := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	for _, k := range []any{ecKey, rsaKey, edKey} {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(block("PRIVATE KEY", der))
		f.Add(block("PRIVATE KEY", der[:len(der)/2]))
	}
	sec1, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(block("EC PRIVATE KEY", sec1))
	f.Add(block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)))
	f.Add(block("RSA PRIVATE KEY", sec1))
	f.Add(block("CERTIFICATE", []byte{0x30, 0x03, 0x02, 0x01, 0x01}))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("not a key"))
	f.Add([]byte{})
	digest := sha256.Sum256([]byte("client assertion"))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := ParsePrivateKeyPEM(data)
		if err != nil {
			if !errors.Is(err, toolkit.ErrBadParameter) {
				t.Fatalf("error %v does not wrap ErrBadParameter", err)
			}
			return
		}
		var ok bool
		switch pub := key.Public().(type) {
		case *ecdsa.PublicKey:
			sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
			ok = err == nil && ecdsa.VerifyASN1(pub, digest[:], sig)
		case *rsa.PublicKey:
			sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
			ok = err == nil && rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil
		case ed25519.PublicKey:
			sig, err := key.Sign(rand.Reader, digest[:], crypto.Hash(0))
			ok = err == nil && ed25519.Verify(pub, digest[:], sig)
		default:
			t.Fatalf("a key of type %T", key)
		}
		if !ok {
			t.Fatalf("the %T it returned does not make signatures its public key verifies", key)
		}
		if _, err := newClientAssertion("client", key, ""); err != nil {
			t.Logf("refused by client assertions: %v", err)
		}
	})
}
