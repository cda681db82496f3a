package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// StoredToken is what a TokenStore keeps for one MCP server and one
// authorization server: the token and what is needed to refresh it.
type StoredToken struct {
	// Resource is the URL of the MCP server (a connector's URL).
	Resource string `json:"resource"`
	// Principal is the user the token acts for, when each user has tokens
	// of their own (see [PrincipalTokenStore]); empty for the tokens of
	// the program itself.
	Principal string `json:"principal,omitempty"`
	// Issuer identifies the authorization server that issued the token
	// (its metadata's issuer; the origin of TokenURL when no metadata
	// named one).
	Issuer string `json:"issuer,omitempty"`
	// Saved is when the token was stored (set by the store).
	Saved time.Time `json:"saved,omitzero"`
	// AuthURL and TokenURL are the authorization server's endpoints.
	AuthURL  string `json:"auth_url,omitempty"`
	TokenURL string `json:"token_url"`
	// ClientID and ClientSecret identify the client the token was issued
	// to (possibly registered dynamically).
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthStyle is how the client authenticates at the token endpoint.
	AuthStyle oauth2.AuthStyle `json:"auth_style,omitempty"`
	// Scopes are the scopes asked for.
	Scopes []string `json:"scopes,omitempty"`
	// Token is the access token, its expiry and the refresh token.
	Token *oauth2.Token `json:"token"`
}

// String describes the stored token without its secrets.
func (t *StoredToken) String() string {
	if t == nil {
		return "<nil>"
	}
	from := t.Issuer
	if from == "" {
		from = t.TokenURL
	}
	if t.Principal != "" {
		return fmt.Sprintf("token of %q for %s from %s (client %s)", t.Principal, t.Resource, from, t.ClientID)
	}
	return fmt.Sprintf("token for %s from %s (client %s)", t.Resource, from, t.ClientID)
}

// LogValue implements slog.LogValuer: secrets are left out.
func (t *StoredToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// TokenStore keeps OAuth tokens across restarts, keyed by the URL of the MCP
// server they give access to (the resource) and the authorization server
// that issued them (the issuer): connectors to different resources of one
// authorization server never share a token, and a resource that moves to
// another authorization server never overwrites the token of the first.
// Implementations must be safe for concurrent use and must keep the tokens
// secret.
type TokenStore interface {
	// LoadToken returns the token stored for resource, or nil and no error
	// when there is none. When tokens of several issuers are stored for
	// the resource it returns the one saved last (a client learns
	// which authorization server the resource uses only when it is asked
	// to authorize; a token the resource no longer accepts makes it
	// authorize again).
	LoadToken(ctx context.Context, resource string) (*StoredToken, error)
	// SaveToken stores t under t.Issuer and t.Resource, replacing any
	// token stored for both.
	SaveToken(ctx context.Context, t *StoredToken) error
}

// PrincipalTokenStore is a [TokenStore] that also keeps the tokens of each
// user apart, for a program that acts upstream for several users with
// each one's own tokens (a gateway, say: see [HandlerConfig.Principal]).
// SaveToken stores a token under t.Principal too, and LoadToken returns
// only tokens stored without a principal: a user's token never serves the
// program itself, nor another user. [FileTokenStore] is one.
type PrincipalTokenStore interface {
	TokenStore
	// LoadPrincipalToken returns the token stored for principal and
	// resource, as LoadToken does for the program's own (principal ""),
	// or nil and no error when there is none.
	LoadPrincipalToken(ctx context.Context, principal, resource string) (*StoredToken, error)
}

// storeKey is the key of a token in a FileTokenStore's file: a hash of its
// issuer and resource, safe as a name anywhere.
func storeKey(issuer, resource string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + resource))
	return "t-" + hex.EncodeToString(sum[:16])
}

// principalKeyPrefix starts the keys of the tokens of a principal in a
// FileTokenStore's file: versions that know no principals never read
// them as their own.
const principalKeyPrefix = "u-"

// keyOf is the key of t in a FileTokenStore's file: storeKey for the
// program's own tokens, a hash of the principal, issuer and resource for
// a principal's.
func keyOf(t *StoredToken) string {
	if t.Principal == "" {
		return storeKey(t.Issuer, t.Resource)
	}
	sum := sha256.Sum256([]byte(t.Principal + "\x00" + t.Issuer + "\x00" + t.Resource))
	return principalKeyPrefix + hex.EncodeToString(sum[:16])
}

// FileTokenStore is a TokenStore, a [PrincipalTokenStore] and a
// RegistrationStore, in one JSON file, readable and writable by its owner only (mode 0600), replaced
// atomically on each change. A file it
// cannot read is left alone (SaveToken fails). It is safe for concurrent use
// within one process; connectors sharing a file should share one
// FileTokenStore. Tokens stored by earlier versions, keyed by resource
// only, are read as tokens of an unknown issuer and replaced by the first
// token saved for their resource.
type FileTokenStore struct {
	path string
	mu   sync.Mutex
}

// NewFileTokenStore returns a store in the file at path (created when
// first written, with its directory, mode 0700).
func NewFileTokenStore(path string) *FileTokenStore {
	return &FileTokenStore{path: path}
}

// DefaultTokenStorePath returns the file where command-line programs keep
// their tokens: toolkit/mcp-oauth-tokens.json under os.UserConfigDir.
func DefaultTokenStorePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "toolkit", "mcp-oauth-tokens.json"), nil
}

// maxTokenFile bounds the token file read.
const maxTokenFile = 4 << 20

// tokenFile is what a FileTokenStore's file holds: tokens under their
// storeKey (or, written by earlier versions, their resource), and
// registrations under their registrationKey.
type tokenFile struct {
	tokens map[string]*StoredToken
	regs   map[string]*StoredRegistration
}

func (s *FileTokenStore) read() (*tokenFile, error) {
	tf := &tokenFile{tokens: map[string]*StoredToken{}, regs: map[string]*StoredRegistration{}}
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxTokenFile {
		return nil, fmt.Errorf("token file %s is larger than %d bytes", s.path, maxTokenFile)
	}
	// An empty file, or null, holds no tokens; anything but one JSON
	// object of records is refused (and never quoted: the file holds
	// secrets).
	notObject := fmt.Errorf("token file %s is not a JSON object of tokens", s.path)
	var m map[string]json.RawMessage
	dec := json.NewDecoder(f)
	if err := dec.Decode(&m); err != nil && err != io.EOF {
		return nil, notObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notObject
	}
	for key, raw := range m {
		var err error
		if strings.HasPrefix(key, registrationPrefix) {
			var r *StoredRegistration
			err = json.Unmarshal(raw, &r)
			tf.regs[key] = r
		} else {
			var t *StoredToken
			err = json.Unmarshal(raw, &t)
			tf.tokens[key] = t
		}
		if err != nil {
			return nil, notObject
		}
	}
	return tf, nil
}

// write replaces the file with tf, atomically.
func (s *FileTokenStore) write(tf *tokenFile) error {
	m := make(map[string]any, len(tf.tokens)+len(tf.regs))
	for k, t := range tf.tokens {
		m[k] = t
	}
	for k, r := range tf.regs {
		m[k] = r
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// LoadToken implements TokenStore: tokens stored for a principal are
// never returned.
func (s *FileTokenStore) LoadToken(ctx context.Context, resource string) (*StoredToken, error) {
	return s.LoadPrincipalToken(ctx, "", resource)
}

// LoadPrincipalToken implements [PrincipalTokenStore].
func (s *FileTokenStore) LoadPrincipalToken(_ context.Context, principal, resource string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tf, err := s.read()
	if err != nil {
		return nil, err
	}
	var best *StoredToken
	for key, t := range tf.tokens {
		if t == nil || t.Token == nil {
			continue
		}
		if legacyKey(key, t) {
			if key != resource || principal != "" {
				continue
			}
			t.Resource, t.Issuer, t.Principal = resource, "", ""
		} else if t.Resource != resource || t.Principal != principal {
			continue
		}
		if best == nil || t.Saved.After(best.Saved) || (t.Saved.Equal(best.Saved) && t.Issuer < best.Issuer) {
			best = t
		}
	}
	return best, nil
}

// legacyKey reports whether t is stored under the key of earlier versions
// (its resource) rather than keyOf.
func legacyKey(key string, t *StoredToken) bool {
	return key != keyOf(t)
}

// SaveToken implements TokenStore.
func (s *FileTokenStore) SaveToken(_ context.Context, t *StoredToken) error {
	if t == nil || t.Resource == "" {
		return errors.New("token store: a token without a resource")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tf, err := s.read()
	if err != nil {
		return err
	}
	rec := *t
	rec.Saved = time.Now().UTC()
	if rec.Principal == "" {
		delete(tf.tokens, rec.Resource) // a token stored by an earlier version
	}
	tf.tokens[keyOf(&rec)] = &rec
	return s.write(tf)
}

// StoredRegistration is a client registered dynamically with an
// authorization server (RFC 7591), kept so that later authorizations, in
// this process or after a restart, use it instead of registering again.
type StoredRegistration struct {
	// Issuer identifies the authorization server.
	Issuer string `json:"issuer"`
	// RedirectURI is the redirect URI registered: a registration serves
	// the client that receives its redirects there.
	RedirectURI string `json:"redirect_uri"`
	// ClientID and ClientSecret are what the server issued (ClientSecret
	// is empty for a public client).
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// TokenEndpointAuthMethod is how the client authenticates at the
	// token endpoint: none, client_secret_post or client_secret_basic.
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// SecretExpiresAt is when the client secret expires (zero: never).
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
	// Saved is when the registration was stored (set by the store).
	Saved time.Time `json:"saved,omitzero"`
}

// String describes the registration without its secret.
func (r *StoredRegistration) String() string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("client %s registered at %s", r.ClientID, r.Issuer)
}

// LogValue implements slog.LogValuer: the secret is left out.
func (r *StoredRegistration) LogValue() slog.Value { return slog.StringValue(r.String()) }

// RegistrationStore is implemented by the token stores that also keep
// dynamic client registrations ([FileTokenStore] does), keyed by the
// authorization server's issuer and the redirect URI. With one, a client
// registers once per authorization server and redirect URI, and keeps
// using that registration across restarts until the server rejects it
// (invalid_client) or it expires. Without one, registrations are kept in
// memory for the life of the [Handler].
type RegistrationStore interface {
	// LoadRegistration returns the registration kept for issuer and
	// redirectURI, or nil and no error when there is none.
	LoadRegistration(ctx context.Context, issuer, redirectURI string) (*StoredRegistration, error)
	// SaveRegistration keeps r under r.Issuer and r.RedirectURI,
	// replacing any registration kept for both.
	SaveRegistration(ctx context.Context, r *StoredRegistration) error
	// DeleteRegistration forgets the registration kept for issuer and
	// redirectURI if its client ID is clientID.
	DeleteRegistration(ctx context.Context, issuer, redirectURI, clientID string) error
}

// registrationPrefix starts the keys of registrations in a
// FileTokenStore's file.
const registrationPrefix = "r-"

// registrationKey is the key of a registration in a FileTokenStore's
// file.
func registrationKey(issuer, redirectURI string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + redirectURI))
	return registrationPrefix + hex.EncodeToString(sum[:16])
}

// LoadRegistration implements [RegistrationStore].
func (s *FileTokenStore) LoadRegistration(_ context.Context, issuer, redirectURI string) (*StoredRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tf, err := s.read()
	if err != nil {
		return nil, err
	}
	r := tf.regs[registrationKey(issuer, redirectURI)]
	if r == nil || r.ClientID == "" || r.Issuer != issuer || r.RedirectURI != redirectURI {
		return nil, nil
	}
	return r, nil
}

// SaveRegistration implements [RegistrationStore].
func (s *FileTokenStore) SaveRegistration(_ context.Context, r *StoredRegistration) error {
	if r == nil || r.Issuer == "" || r.ClientID == "" {
		return errors.New("token store: a registration without an issuer or a client ID")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tf, err := s.read()
	if err != nil {
		return err
	}
	rec := *r
	rec.Saved = time.Now().UTC()
	tf.regs[registrationKey(rec.Issuer, rec.RedirectURI)] = &rec
	return s.write(tf)
}

// DeleteRegistration implements [RegistrationStore].
func (s *FileTokenStore) DeleteRegistration(_ context.Context, issuer, redirectURI, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tf, err := s.read()
	if err != nil {
		return err
	}
	key := registrationKey(issuer, redirectURI)
	if r := tf.regs[key]; r == nil || r.ClientID != clientID {
		return nil
	}
	delete(tf.regs, key)
	return s.write(tf)
}

// principalStore is the view of a PrincipalTokenStore that a Handler of
// one principal uses: it loads and saves that principal's tokens only.
type principalStore struct {
	PrincipalTokenStore
	principal string
}

// LoadToken returns the principal's token for resource.
func (s principalStore) LoadToken(ctx context.Context, resource string) (*StoredToken, error) {
	return s.LoadPrincipalToken(ctx, s.principal, resource)
}

// SaveToken saves t as the principal's.
func (s principalStore) SaveToken(ctx context.Context, t *StoredToken) error {
	rec := *t
	rec.Principal = s.principal
	return s.PrincipalTokenStore.SaveToken(ctx, &rec)
}
