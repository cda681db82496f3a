package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// connected it is recorded and made when it is. A subscription of a URI
// whose subscription is being sent waits for that one and shares its
// outcome; the subscriptions of other URIs do not wait.
func (c *Connector) SubscribeResource(ctx context.Context, uri string) error {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if c.subs.by == nil {
		c.subs.by, c.subs.on, c.subs.flying = map[string]int{}, map[string]bool{}, map[string]*subFlight{}
	}
	c.subs.by[uri]++
	for {
		f := c.subs.flying[uri]
		if f == nil {
			break
		}
		err := c.awaitFlight(ctx, f)
		if err == nil && f.on {
			err = f.err // that subscription's outcome is this one's
		}
		if err != nil {
			c.dropSubscription(ctx, uri)
			return err
		}
	}
	if c.subs.on[uri] {
		return nil
	}
	err := c.fly(ctx, uri, true)
	if err != nil {
		c.dropSubscription(ctx, uri)
		return err
	}
	// Unsubscribed meanwhile: the last unsubscription wins.
	c.settle(ctx, uri)
	return nil
}

// UnsubscribeResource drops one subscription made with SubscribeResource;
// the last one unsubscribes on the server (once the subscription being
// sent, if any, is made).
func (c *Connector) UnsubscribeResource(ctx context.Context, uri string) error {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if c.subs.by[uri] == 0 {
		return nil
	}
	return c.dropSubscription(ctx, uri)
}

// subFlight is the subscription, or unsubscription (on false), of one
// URI being sent.
type subFlight struct {
	on   bool
	done chan struct{} // closed once sent
	err  error
}

// fly sends the subscription (on) or unsubscription of uri, as its one
// flight: c.subs.mu is released meanwhile, so that the other URIs'
// subscriptions go on, and those of uri wait for it. c.subs.mu is held.
func (c *Connector) fly(ctx context.Context, uri string, on bool) error {
	f := &subFlight{on: on, done: make(chan struct{})}
	c.subs.flying[uri] = f
	c.subs.mu.Unlock()
	err := c.sendSubscription(ctx, uri, on)
	c.subs.mu.Lock()
	delete(c.subs.flying, uri)
	f.err = err
	close(f.done)
	if on && err == nil {
		c.subs.on[uri] = true
	} else if !on {
		// Gone from the server, or from this session of it at least.
		delete(c.subs.on, uri)
	}
	return err
}

// awaitFlight waits for f with c.subs.mu released, or until ctx ends.
// c.subs.mu is held.
func (c *Connector) awaitFlight(ctx context.Context, f *subFlight) error {
	c.subs.mu.Unlock()
	defer c.subs.mu.Lock()
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for a subscription being sent: %w", errs.ErrUnavailable, ctx.Err())
	}
}

// dropSubscription drops one subscription of uri and, with the last,
// unsubscribes on the server. c.subs.mu is held.
func (c *Connector) dropSubscription(ctx context.Context, uri string) error {
	if c.subs.by[uri]--; c.subs.by[uri] > 0 {
		return nil
	}
	delete(c.subs.by, uri)
	return c.settle(ctx, uri)
}

// settle unsubscribes from uri on the server when nobody wants it any
// more, unless a flight of uri is under way (its sender settles).
// c.subs.mu is held.
func (c *Connector) settle(ctx context.Context, uri string) error {
	if c.subs.by[uri] > 0 || !c.subs.on[uri] || c.subs.flying[uri] != nil {
		return nil
	}
	return c.fly(ctx, uri, false)
}

// sendSubscription sends resources/subscribe or resources/unsubscribe on
// the current session, if any (see fly).
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
	if on && stateless(l.sess) {
		err = c.subscribeAcknowledged(ctx, l, uri)
	} else if on {
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

// ackMethod is the notification with which a server of protocol
// StatelessProtocolVersion takes on the subscriptions of a
// subscriptions/listen request.
const ackMethod = "notifications/subscriptions/acknowledged"

// ackWait bounds how long a subscription waits for its server's
// acknowledgement. The go-sdk's client does not report a server's refusal
// of a subscriptions/listen request; a server that refuses is waited out.
const ackWait = 10 * time.Second

// ackKey names one resource subscription of one session.
type ackKey struct {
	sess *sdk.ClientSession
	uri  string
}

// subscribeAcknowledged subscribes to uri on l, a session of protocol
// StatelessProtocolVersion, and returns once the server acknowledged the
// subscription. With that protocol the go-sdk's Subscribe returns as soon
// as its subscriptions/listen request is sent, and the server only follows
// the resource from its acknowledgement on: answering a caller before then
// would lose the updates in between (a gateway's client subscribes, then
// the resource changes). A server that does not acknowledge, or refuses
// the resource, within ackWait or ctx is unsubscribed from and reported.
func (c *Connector) subscribeAcknowledged(ctx context.Context, l *live, uri string) error {
	key := ackKey{l.sess, uri}
	ch := make(chan struct{})
	c.subs.acksMu.Lock()
	if c.subs.acks == nil {
		c.subs.acks = map[ackKey]chan struct{}{}
	}
	c.subs.acks[key] = ch
	c.subs.acksMu.Unlock()
	defer func() {
		c.subs.acksMu.Lock()
		if c.subs.acks[key] == ch {
			delete(c.subs.acks, key)
		}
		c.subs.acksMu.Unlock()
	}()
	if err := l.sess.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		return err
	}
	wait := time.NewTimer(ackWait)
	defer wait.Stop()
	var why error
	select {
	case <-ch:
		return nil
	case <-l.done:
		why = errors.New("the session ended before the server acknowledged the subscription")
	case <-wait.C:
		why = fmt.Errorf("the server did not acknowledge the subscription within %v", ackWait)
	case <-ctx.Done():
		why = ctx.Err()
	}
	// Close the subscriptions/listen stream the server may still take on.
	_ = l.sess.Unsubscribe(context.WithoutCancel(ctx), &sdk.UnsubscribeParams{URI: uri})
	return why
}

// acknowledged wakes the subscriptions a server's
// notifications/subscriptions/acknowledged takes on.
func (c *Connector) acknowledged(req sdk.Request) {
	p, ok := req.GetParams().(*sdk.SubscriptionsAcknowledgedParams)
	if !ok || p == nil {
		return
	}
	sess, _ := req.GetSession().(*sdk.ClientSession)
	c.subs.acksMu.Lock()
	defer c.subs.acksMu.Unlock()
	for _, uri := range p.Notifications.ResourceSubscriptions {
		key := ackKey{sess, uri}
		if ch, ok := c.subs.acks[key]; ok {
			close(ch)
			delete(c.subs.acks, key)
		}
	}
}
