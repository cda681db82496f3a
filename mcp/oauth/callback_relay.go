package oauth

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/internal/errs"
)

// Redirect is an authorization server's redirect as a [RedirectRelay]
// carries it between processes: its state, and its code and issuer, or
// its refusal.
type Redirect struct {
	State string `json:"state"`
	Code  string `json:"code,omitempty"`
	Iss   string `json:"iss,omitempty"`
	Error string `json:"error,omitempty"`
}

// RedirectRelay carries redirects between the processes of a fleet that
// serve one redirect URL behind a load balancer: the authorization a
// user started on one replica waits there (its PKCE verifier is there),
// but the user's browser may bring the redirect to another. A
// [Callback] with a relay ([CallbackConfig.Relay]) hands such a redirect
// on, and takes those the others hand on ([Callback.ListenRelay]).
// Package github.com/llmkit/toolkit/redisstate has one on Redis.
type RedirectRelay interface {
	// Relay hands r to the process waiting for its state and reports
	// whether one took it (within a bound of the relay's own).
	Relay(ctx context.Context, r Redirect) (bool, error)
	// Listen calls take with every redirect another process relays,
	// until ctx ends; take reports whether this process took it, which
	// the relay tells the one that relayed it. It returns ctx's error,
	// or why it cannot listen.
	Listen(ctx context.Context, take func(Redirect) bool) error
}

// ListenRelay takes the redirects other processes relay, until ctx ends:
// the program runs it beside its listener when its callback has a relay.
// It returns ctx's error, or the relay's.
func (c *Callback) ListenRelay(ctx context.Context) error {
	if c.cfg.Relay == nil {
		return fmt.Errorf("%w: Callback.ListenRelay: the callback has no relay", errs.ErrBadParameter)
	}
	return c.cfg.Relay.Listen(ctx, c.deliver)
}

// deliver gives r to the authorization waiting for its state, if this
// callback has one, and reports whether it did. Of several deliveries of
// one state, one counts.
func (c *Callback) deliver(r Redirect) bool {
	e := c.take(r.State)
	if e == nil {
		return false
	}
	e.arrived.Store(true)
	if r.Error != "" {
		e.ch <- loopbackResult{err: fmt.Errorf("the authorization server refused: %s", oneLine(r.Error, 64))}
	} else {
		e.ch <- loopbackResult{res: &auth.AuthorizationResult{Code: r.Code, State: r.State, Iss: r.Iss}}
	}
	return true
}
