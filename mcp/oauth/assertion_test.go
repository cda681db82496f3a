package oauth

import (
	"bytes"
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
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/llmkit/toolkit/internal/errs"
)

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
			if !errors.Is(err, errs.ErrBadParameter) {
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
