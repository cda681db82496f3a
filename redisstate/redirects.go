package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// RedirectRelay carries authorization redirects between the replicas of
// a fleet on Redis, an [oauth.RedirectRelay]: a per-user authorization
// started on one replica completes there even when the user's browser
// brings the redirect to another. Redirects travel sealed (an
// authorization code is a secret, even bound to its PKCE verifier) on a
// channel; the replica that waits for the state takes it and answers on
// a channel of the relaying replica's own, so exactly one takes it and
// the browser is told whether one did. Get one from [Store.Redirects].
type RedirectRelay struct {
	s       *Store
	channel string
}

var _ oauth.RedirectRelay = (*RedirectRelay)(nil)

// relayed is what travels on the channel: the redirect, and where to
// answer.
type relayed struct {
	Redirect oauth.Redirect `json:"redirect"`
	Reply    string         `json:"reply"`
}

// Redirects returns the store's [RedirectRelay]. It needs
// [Config.SealKeys].
func (s *Store) Redirects() (*RedirectRelay, error) {
	if s.seal == nil {
		return nil, fmt.Errorf("%w: redisstate: redirects need Config.SealKeys: authorization codes are never sent in clear", toolkit.ErrBadParameter)
	}
	return &RedirectRelay{s: s, channel: s.prefix + "redirects"}, nil
}

// Relay implements [oauth.RedirectRelay]: it waits for the replica that
// takes r at most the store's timeout.
func (rr *RedirectRelay) Relay(ctx context.Context, r oauth.Redirect) (bool, error) {
	ctx, cancel := rr.s.bound(ctx)
	defer cancel()
	var nonce [16]byte
	rand.Read(nonce[:])
	reply := rr.channel + ":taken:" + hex.EncodeToString(nonce[:])
	msg, err := rr.s.sealRecord(rr.channel, "", relayed{Redirect: r, Reply: reply})
	if err != nil {
		return false, err
	}
	sub := rr.s.rdb.Subscribe(ctx, reply)
	defer sub.Close()
	// The answer may come at once: listen before asking.
	if _, err := sub.Receive(ctx); err != nil {
		return false, rr.s.fail("relay a redirect", err)
	}
	n, err := rr.s.rdb.Publish(ctx, rr.channel, msg).Result()
	if err != nil {
		return false, rr.s.fail("relay a redirect", err)
	}
	if n == 0 {
		return false, nil
	}
	select {
	case <-sub.Channel():
		return true, nil
	case <-ctx.Done():
		return false, nil // nobody took it in time
	}
}

// Listen implements [oauth.RedirectRelay].
func (rr *RedirectRelay) Listen(ctx context.Context, take func(oauth.Redirect) bool) error {
	return rr.s.listen(ctx, rr.channel, nil, func(payload string) {
		var rel relayed
		if !rr.s.openRecord(rr.channel, "", payload, &rel) || rel.Redirect.State == "" {
			return
		}
		if take(rel.Redirect) {
			actx, cancel := rr.s.bound(ctx)
			rr.s.rdb.Publish(actx, rel.Reply, "1")
			cancel()
		}
	}, nil)
}
