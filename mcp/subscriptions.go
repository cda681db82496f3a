package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

var _ bridge.Subscriber = (*remoteResource)(nil)

// Subscribe subscribes to the resource on the server.
func (r *remoteResource) Subscribe(ctx context.Context) error {
	return r.c.SubscribeResource(ctx, r.def.URI)
}

// Unsubscribe drops one subscription to the resource.
func (r *remoteResource) Unsubscribe(ctx context.Context) error {
	return r.c.UnsubscribeResource(ctx, r.def.URI)
}

// SubscribeResource asks the server for updates of the resource with the
// URI, which it reports through OptOnResourceUpdated. The subscription is
// counted and outlives reconnections. It fails with toolkit.ErrNotImplemented
// when the server offers no subscriptions; while the connector is not
// connected it is recorded and made when it is.
func (c *Connector) SubscribeResource(ctx context.Context, uri string) error {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if c.subs.by == nil {
		c.subs.by = map[string]int{}
	}
	c.subs.by[uri]++
	if c.subs.by[uri] > 1 {
		return nil
	}
	if err := c.sendSubscription(ctx, uri, true); err != nil {
		if c.subs.by[uri]--; c.subs.by[uri] == 0 {
			delete(c.subs.by, uri)
		}
		return err
	}
	return nil
}

// UnsubscribeResource drops one subscription made with SubscribeResource;
// the last one unsubscribes on the server.
func (c *Connector) UnsubscribeResource(ctx context.Context, uri string) error {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if c.subs.by[uri] == 0 {
		return nil
	}
	if c.subs.by[uri]--; c.subs.by[uri] > 0 {
		return nil
	}
	delete(c.subs.by, uri)
	return c.sendSubscription(ctx, uri, false)
}

// sendSubscription sends resources/subscribe or resources/unsubscribe on
// the current session, if any. c.subs.mu must be held.
func (c *Connector) sendSubscription(ctx context.Context, uri string, on bool) error {
	c.life.mu.Lock()
	l := c.life.cur
	c.life.mu.Unlock()
	if l == nil {
		return nil // made by resubscribe on the next connection
	}
	if !serverSubscribes(l) {
		if !on {
			return nil
		}
		return fmt.Errorf("%w: server %s does not offer resource subscriptions", errs.ErrNotImplemented, c.serverName())
	}
	var err error
	if on {
		err = l.sess.Subscribe(ctx, &sdk.SubscribeParams{URI: uri})
	} else {
		err = l.sess.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri})
	}
	if err != nil {
		return fmt.Errorf("%w: resource %q of server %s: %v", errs.ErrUnavailable, uri, c.serverName(), err)
	}
	return nil
}

// serverSubscribes reports whether the server of l offers subscriptions.
func serverSubscribes(l *live) bool {
	init := l.sess.InitializeResult()
	return init != nil && init.Capabilities != nil && init.Capabilities.Resources != nil && init.Capabilities.Resources.Subscribe
}

// resubscribe renews on a new session the subscriptions callers asked for.
func (c *Connector) resubscribe(ctx context.Context, l *live) {
	if !serverSubscribes(l) {
		return
	}
	c.subs.mu.Lock()
	uris := make([]string, 0, len(c.subs.by))
	for uri := range c.subs.by {
		uris = append(uris, uri)
	}
	c.subs.mu.Unlock()
	c.subscribeEach(ctx, l, uris)
}
