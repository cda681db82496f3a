package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/redis/go-redis/v9"
)

// TokenStore keeps OAuth tokens and client registrations in Redis, sealed:
// an [oauth.PrincipalTokenStore] and an [oauth.RegistrationStore] that every
// process of a fleet shares, so a user who authorized on one replica is
// served by all, and the fleet registers its OAuth client once. Get one
// from [Store.Tokens].
type TokenStore struct {
	s *Store
}

var (
	_ oauth.PrincipalTokenStore = (*TokenStore)(nil)
	_ oauth.RegistrationStore   = (*TokenStore)(nil)
)

// Tokens returns the store's [TokenStore]. It needs [Config.SealKeys].
func (s *Store) Tokens() (*TokenStore, error) {
	if s.seal == nil {
		return nil, fmt.Errorf("%w: redisstate: tokens need Config.SealKeys: credentials are never stored in clear", toolkit.ErrBadParameter)
	}
	return &TokenStore{s: s}, nil
}

// tokensKey is the Redis hash of the tokens of principal for resource, one
// field per issuer.
func (t *TokenStore) tokensKey(principal, resource string) string {
	return t.s.key("tok", principal, resource)
}

// LoadToken implements [oauth.TokenStore]: the program's own token for
// resource; a user's is never returned.
func (t *TokenStore) LoadToken(ctx context.Context, resource string) (*oauth.StoredToken, error) {
	return t.LoadPrincipalToken(ctx, "", resource)
}

// LoadPrincipalToken implements [oauth.PrincipalTokenStore]: of the tokens
// of principal for resource, the one saved last.
func (t *TokenStore) LoadPrincipalToken(ctx context.Context, principal, resource string) (*oauth.StoredToken, error) {
	ctx, cancel := t.s.bound(ctx)
	defer cancel()
	key := t.tokensKey(principal, resource)
	fields, err := t.s.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, t.s.fail("load token", err)
	}
	var best *oauth.StoredToken
	for issuer, sealed := range fields {
		var rec oauth.StoredToken
		if !t.s.openRecord(key, issuer, sealed, &rec) {
			continue
		}
		// A record is what it says only where it was sealed: the seal
		// binds it to key and field, and these to its fields.
		if rec.Token == nil || rec.Issuer != issuer || rec.Principal != principal || rec.Resource != resource {
			continue
		}
		if best == nil || rec.Saved.After(best.Saved) || (rec.Saved.Equal(best.Saved) && rec.Issuer < best.Issuer) {
			best = &rec
		}
	}
	return best, nil
}

// SaveToken implements [oauth.TokenStore]: tok replaces the token of its
// principal, issuer and resource.
func (t *TokenStore) SaveToken(ctx context.Context, tok *oauth.StoredToken) error {
	if tok == nil || tok.Resource == "" {
		return errors.New("redisstate: a token without a resource")
	}
	rec := *tok
	rec.Saved = time.Now().UTC()
	key := t.tokensKey(rec.Principal, rec.Resource)
	sealed, err := t.s.sealRecord(key, rec.Issuer, &rec)
	if err != nil {
		return err
	}
	ctx, cancel := t.s.bound(ctx)
	defer cancel()
	return t.s.fail("save token", t.s.rdb.HSet(ctx, key, rec.Issuer, sealed).Err())
}

// regKey is the Redis hash of the registration for issuer and
// redirectURI: field "rec" the sealed record, field "client" a hash of
// its client ID (to delete it only when it is still the one refused).
func (t *TokenStore) regKey(issuer, redirectURI string) string {
	return t.s.key("reg", issuer, redirectURI)
}

// clientHash is what a registration's "client" field holds.
func clientHash(clientID string) string {
	sum := sha256.Sum256([]byte(clientID))
	return hex.EncodeToString(sum[:])
}

// LoadRegistration implements [oauth.RegistrationStore].
func (t *TokenStore) LoadRegistration(ctx context.Context, issuer, redirectURI string) (*oauth.StoredRegistration, error) {
	ctx, cancel := t.s.bound(ctx)
	defer cancel()
	key := t.regKey(issuer, redirectURI)
	sealed, err := t.s.rdb.HGet(ctx, key, "rec").Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, t.s.fail("load registration", err)
	}
	var r oauth.StoredRegistration
	if !t.s.openRecord(key, "rec", sealed, &r) || r.ClientID == "" || r.Issuer != issuer || r.RedirectURI != redirectURI {
		return nil, nil
	}
	return &r, nil
}

// SaveRegistration implements [oauth.RegistrationStore].
func (t *TokenStore) SaveRegistration(ctx context.Context, r *oauth.StoredRegistration) error {
	if r == nil || r.Issuer == "" || r.ClientID == "" {
		return errors.New("redisstate: a registration without an issuer or a client ID")
	}
	rec := *r
	rec.Saved = time.Now().UTC()
	key := t.regKey(rec.Issuer, rec.RedirectURI)
	sealed, err := t.s.sealRecord(key, "rec", &rec)
	if err != nil {
		return err
	}
	ctx, cancel := t.s.bound(ctx)
	defer cancel()
	return t.s.fail("save registration", t.s.rdb.HSet(ctx, key, "rec", sealed, "client", clientHash(rec.ClientID)).Err())
}

// deleteRegistration deletes KEYS[1] when its client field is ARGV[1]:
// a registration another process saved meanwhile is kept.
var deleteRegistration = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'client') == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0`)

// DeleteRegistration implements [oauth.RegistrationStore].
func (t *TokenStore) DeleteRegistration(ctx context.Context, issuer, redirectURI, clientID string) error {
	ctx, cancel := t.s.bound(ctx)
	defer cancel()
	err := deleteRegistration.Run(ctx, t.s.rdb, []string{t.regKey(issuer, redirectURI)}, clientHash(clientID)).Err()
	return t.s.fail("delete registration", err)
}

// sealRecord returns v as JSON sealed for key and field.
func (s *Store) sealRecord(key, field string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(s.seal.seal(plain, key+"\x00"+field)), nil
}

// openRecord opens sealed, stored at key and field, into v. A record that
// is too large, does not open or does not decode is logged (never
// quoted) and reported as absent.
func (s *Store) openRecord(key, field, sealed string, v any) bool {
	if len(sealed) > maxRecord {
		s.log.Warn("redis state: a record is too large; skipped", "key", key, "bytes", len(sealed))
		return false
	}
	plain, err := s.seal.open([]byte(sealed), key+"\x00"+field)
	if err == nil {
		err = json.Unmarshal(plain, v)
	}
	if err != nil {
		s.log.Warn("redis state: a record cannot be read; skipped", "key", key, "error", err)
		return false
	}
	return true
}
