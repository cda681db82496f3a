package oauth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/llmkit/toolkit/internal/errs"
)

// clientAssertionType is the client_assertion_type of a JWT client
// assertion (RFC 7523 §2.2).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// maxTokenRequest bounds the token request body a client assertion rewrites.
const maxTokenRequest = 1 << 16

// ParsePrivateKeyPEM returns the private key of the first PEM block of
// data: PKCS #8 ("PRIVATE KEY"), SEC 1 ("EC PRIVATE KEY") or PKCS #1 ("RSA
// PRIVATE KEY"), for [ClientCredentialsJWT].
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block in the private key", errs.ErrBadParameter)
	}
	var (
		key any
		err error
	)
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %v", errs.ErrBadParameter, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: private key of type %T cannot sign", errs.ErrBadParameter, key)
	}
	return s, nil
}

// clientAssertion signs the JWT client assertions of one client and puts
// them into its token requests.
type clientAssertion struct {
	clientID string
	signer   jose.Signer
	standIn  string // the client secret given to the SDK's handler

	mu     sync.Mutex
	issuer map[string]string // token endpoint -> issuer, from the metadata fetched
}

func newClientAssertion(clientID string, key crypto.Signer, alg jose.SignatureAlgorithm) (*clientAssertion, error) {
	if alg == "" {
		alg = defaultAlgorithm(key)
		if alg == "" {
			return nil, fmt.Errorf("no default algorithm for a key of type %T", key)
		}
	}
	var k any = key
	switch key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
	default:
		k = cryptosigner.Opaque(key)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	a := &clientAssertion{clientID: clientID, signer: signer, standIn: rand.Text(), issuer: map[string]string{}}
	if _, err := a.sign("https://check.invalid"); err != nil { // the key and algorithm go together
		return nil, err
	}
	return a, nil
}

// defaultAlgorithm returns the JWS algorithm for key, or "" when there is
// no obvious one.
func defaultAlgorithm(key crypto.Signer) jose.SignatureAlgorithm {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256
		case elliptic.P384():
			return jose.ES384
		case elliptic.P521():
			return jose.ES512
		}
	case *rsa.PublicKey:
		return jose.RS256
	case ed25519.PublicKey:
		return jose.EdDSA
	}
	return ""
}

// sign returns a new assertion for the audience aud.
func (a *clientAssertion) sign(aud string) (string, error) {
	now := time.Now()
	return jwt.Signed(a.signer).Claims(jwt.Claims{
		Issuer:   a.clientID,
		Subject:  a.clientID,
		Audience: jwt.Audience{aud},
		ID:       rand.Text(),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(assertionLifetime)),
	}).Serialize()
}

// client returns hc with a transport that notes the authorization server
// metadata fetched and replaces the stand-in secret of the token requests
// with an assertion.
func (a *clientAssertion) client(hc *http.Client) *http.Client {
	return wrapClient(hc, a.roundTrip)
}

// roundTrip is the [middleware] of [clientAssertion.client].
func (a *clientAssertion) roundTrip(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		r, err := a.rewrite(req)
		if err != nil {
			return nil, err
		}
		req = r
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	m, resp, err := peekAuthServerMetadata(req, resp)
	if m != nil && m.Issuer != "" && m.TokenEndpoint != "" {
		a.mu.Lock()
		a.issuer[m.TokenEndpoint] = m.Issuer
		a.mu.Unlock()
	}
	return resp, err
}

// errTokenRequest is returned for a token request with the stand-in secret
// whose form cannot be read.
var errTokenRequest = errors.New("the token request cannot carry a client assertion")

// rewrite returns req, or, when req is a token request authenticated with
// the stand-in secret (in the Authorization header or the form), a copy of
// it authenticated with an assertion instead.
func (a *clientAssertion) rewrite(req *http.Request) (*http.Request, error) {
	_, secret, basic := req.BasicAuth()
	basic = basic && secret == a.standIn
	ct := req.Header.Get("Content-Type")
	if !basic && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return req, nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxTokenRequest+1))
	if err != nil {
		req.Body.Close()
		return nil, err
	}
	form, perr := url.ParseQuery(string(body))
	inForm := perr == nil && len(body) <= maxTokenRequest && form.Get("client_secret") == a.standIn
	if !basic && !inForm {
		// Not a token request of this client: sent as it came.
		r := req.Clone(req.Context())
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
		return r, nil
	}
	req.Body.Close()
	if perr != nil || len(body) > maxTokenRequest {
		return nil, errTokenRequest
	}
	aud := req.URL.String()
	a.mu.Lock()
	if iss, ok := a.issuer[aud]; ok {
		aud = iss
	}
	a.mu.Unlock()
	jws, err := a.sign(aud)
	if err != nil {
		return nil, fmt.Errorf("signing the client assertion: %w", err)
	}
	form.Del("client_secret")
	form.Set("client_id", a.clientID)
	form.Set("client_assertion_type", clientAssertionType)
	form.Set("client_assertion", jws)
	enc := form.Encode()
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	r.Body = io.NopCloser(bytes.NewReader([]byte(enc)))
	r.ContentLength = int64(len(enc))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(enc))), nil }
	return r, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
