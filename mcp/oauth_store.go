package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"
)

// StoredToken is what a TokenStore keeps for one MCP server: the token and
// what is needed to refresh it.
type StoredToken struct {
	// Resource is the URL of the MCP server (the connector's URL).
	Resource string `json:"resource"`
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
	return fmt.Sprintf("token for %s from %s (client %s)", t.Resource, t.TokenURL, t.ClientID)
}

// LogValue implements slog.LogValuer: secrets are left out.
func (t *StoredToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// TokenStore keeps OAuth tokens across restarts, keyed by the URL of the MCP
// server they give access to (the resource). Implementations must be safe for
// concurrent use and must keep the tokens secret.
type TokenStore interface {
	// LoadToken returns the token stored for resource, or nil and no error
	// when there is none.
	LoadToken(ctx context.Context, resource string) (*StoredToken, error)
	// SaveToken stores t under t.Resource, replacing any token stored
	// there.
	SaveToken(ctx context.Context, t *StoredToken) error
}

// FileTokenStore is a TokenStore in one JSON file, readable and writable by
// its owner only (mode 0600), replaced atomically on each change. A file it
// cannot read is left alone (SaveToken fails). It is safe for concurrent use
// within one process; connectors sharing a file should share one
// FileTokenStore.
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
	m := map[string]*StoredToken{}
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		// Never quote the file: it holds secrets.
		return nil, fmt.Errorf("token file %s is not valid JSON", s.path)
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
	t := m[resource]
	if t == nil || t.Token == nil {
		return nil, nil
	}
	t.Resource = resource
	return t, nil
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
	m[t.Resource] = t
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

// newTokenSource is the SDK handler's NewTokenSource with a store: the
// token is saved now and whenever it is refreshed.
func (h *oauthHandler) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	s := h.savingSource(ctx, cfg, tok)
	s.save(tok)
	return s, nil
}

func (h *oauthHandler) savingSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) *savingSource {
	return &savingSource{
		h:    h,
		ts:   cfg.TokenSource(ctx, tok),
		last: tok.AccessToken,
		rec: StoredToken{
			Resource:     h.c.url,
			AuthURL:      cfg.Endpoint.AuthURL,
			TokenURL:     cfg.Endpoint.TokenURL,
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			AuthStyle:    cfg.Endpoint.AuthStyle,
			Scopes:       cfg.Scopes,
		},
	}
}

// load returns a token source for the stored token of the connector, or nil
// when there is none worth using.
func (h *oauthHandler) load(ctx context.Context, hc *http.Client) oauth2.TokenSource {
	st, err := h.store.LoadToken(ctx, h.c.url)
	if err != nil {
		h.c.logger.Warn("could not load the stored OAuth token", "error", err)
		return nil
	}
	if st == nil || st.Token == nil || st.TokenURL == "" || (!st.Token.Valid() && st.Token.RefreshToken == "") {
		return nil
	}
	cfg := &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: st.AuthStyle},
		Scopes:       st.Scopes,
	}
	// Refreshes outlive the connection attempt.
	rctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	return h.savingSource(rctx, cfg, st.Token)
}

// savingSource saves each new token of its source.
type savingSource struct {
	h   *oauthHandler
	ts  oauth2.TokenSource
	rec StoredToken

	mu   sync.Mutex
	last string // the access token saved last
}

// Token implements oauth2.TokenSource.
func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.ts.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := t.AccessToken != s.last
	s.last = t.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(t)
	}
	return t, nil
}

func (s *savingSource) save(t *oauth2.Token) {
	rec := s.rec
	rec.Token = t
	if err := s.h.store.SaveToken(context.Background(), &rec); err != nil {
		s.h.c.logger.Warn("could not store the OAuth token", "error", err)
	}
}
