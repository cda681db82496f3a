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
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// StoredToken is what a TokenStore keeps for one MCP server and one
// authorization server: the token and what is needed to refresh it.
type StoredToken struct {
	// Resource is the URL of the MCP server (a connector's URL).
	Resource string `json:"resource"`
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

// storeKey is the key of a token in a FileTokenStore's file: a hash of its
// issuer and resource, safe as a name anywhere.
func storeKey(issuer, resource string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + resource))
	return "t-" + hex.EncodeToString(sum[:16])
}

// FileTokenStore is a TokenStore in one JSON file, readable and writable by
// its owner only (mode 0600), replaced atomically on each change. A file it
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

func (s *FileTokenStore) read() (map[string]*StoredToken, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*StoredToken{}, nil
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
	// object is refused (and never quoted: the file holds secrets).
	var m map[string]*StoredToken
	dec := json.NewDecoder(f)
	if err := dec.Decode(&m); err != nil && err != io.EOF {
		return nil, fmt.Errorf("token file %s is not a JSON object", s.path)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("token file %s is not a JSON object", s.path)
	}
	if m == nil {
		m = map[string]*StoredToken{}
	}
	return m, nil
}

// LoadToken implements TokenStore.
func (s *FileTokenStore) LoadToken(_ context.Context, resource string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	var best *StoredToken
	for key, t := range m {
		if t == nil || t.Token == nil {
			continue
		}
		if legacyKey(key, t) {
			if key != resource {
				continue
			}
			t.Resource, t.Issuer = resource, ""
		} else if t.Resource != resource {
			continue
		}
		if best == nil || t.Saved.After(best.Saved) || (t.Saved.Equal(best.Saved) && t.Issuer < best.Issuer) {
			best = t
		}
	}
	return best, nil
}

// legacyKey reports whether t is stored under the key of earlier versions
// (its resource) rather than storeKey.
func legacyKey(key string, t *StoredToken) bool {
	return key != storeKey(t.Issuer, t.Resource)
}

// SaveToken implements TokenStore.
func (s *FileTokenStore) SaveToken(_ context.Context, t *StoredToken) error {
	if t == nil || t.Resource == "" {
		return errors.New("token store: a token without a resource")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	rec := *t
	rec.Saved = time.Now().UTC()
	delete(m, rec.Resource) // a token stored by an earlier version
	m[storeKey(rec.Issuer, rec.Resource)] = &rec
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
