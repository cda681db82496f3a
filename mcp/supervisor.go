package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// maxEndedAuth bounds the attempts in a row retried at once because the
// authorization they found pending had ended by the time they failed.
const maxEndedAuth = 3

// Run connects to the server and keeps the connection alive until ctx is
// cancelled, reconnecting with backoff whenever it is lost. It returns nil
// when ctx is cancelled, and an error when the connector gives up
// (Reconnect.MaxAttempts, or a stdio program that cannot be started: not found,
// or not executable). Its state is StatusConnecting during the first
// attempt and StatusReconnecting, with LastError saying why, once an
// attempt failed or a session was lost, until it is ready again; a
// server that refuses every attempt (a stdio program that exits before
// the handshake, an HTTP server that is down) is retried with backoff
// for as long as Run lasts, and stays StatusReconnecting with the latest
// failure in LastError. When the connector gives up its state is
// StatusFailed; a Run after that starts as StatusReconnecting. Only one Run
// may be active at a time; when it returns, the session is closed, any
// child process is reaped and no goroutine of the connector remains.
func (c *Connector) Run(ctx context.Context) error {
	if !c.life.running.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: connector %s is already running", errs.ErrConflict, c.label())
	}
	defer c.life.running.Store(false)
	if c.o.oauth != nil {
		// The supervisor's requests never wait for a person: it waits
		// for the authorization itself (waitAuthorization).
		ctx = oauth.NoWait(ctx)
		defer c.oauthStop()
	}
	c.adoptNamespace(ctx)
	defer c.watchRoots()()
	defer c.up.run(ctx)()
	c.life.mu.Lock()
	c.life.stopped = false
	c.life.mu.Unlock()
	defer func() {
		if c.link.ownHTTP != nil {
			c.link.ownHTTP.CloseIdleConnections()
		}
	}()

	// The first attempt is "connecting"; once one has failed, or a
	// session was lost, the connector is "reconnecting" with the reason in
	// LastError until it is ready again. A connector run again after it
	// gave up (the toolkit restarts it) is retrying too, and keeps saying
	// why it gave up until the next attempt fails or succeeds.
	status, errText := toolkit.StatusConnecting, ""
	if st := c.State(); st.Status == toolkit.StatusFailed {
		status, errText = toolkit.StatusReconnecting, st.LastError
	}
	// attempt counts the consecutive failures since the last connection
	// that stayed up for Reconnect.StableAfter: failed connection attempts, and
	// sessions lost less than kickFloor after a loss retried at once.
	attempt := 0
	// endedAuth counts the attempts in a row that found an authorization
	// pending which had ended when they were looked at: each is retried
	// at once, maxEndedAuth of them at most.
	endedAuth := 0
	var lastQuick time.Time // the last loss retried at once
	for first := true; ; first = false {
		if ctx.Err() != nil {
			c.stop(ctx)
			return nil
		}
		// The state before an attempt; after a failure or a loss it was
		// reported already.
		if st, changed := c.changeState(func(s *toolkit.ConnectorState) {
			s.Status, s.LastError, s.ConnectedSince = status, errText, time.Time{}
		}); first || changed {
			c.report(ctx, st)
		}
		c.link.challenge.Store(nil)
		l, err := c.connect(ctx)
		// net/http quotes the request URL, whose query may hold a secret.
		err = toolkit.RedactError(err)
		if err != nil {
			if ctx.Err() != nil {
				c.stop(ctx)
				return nil
			}
			if nerr, ok := c.withoutOAuth(ctx); ok {
				// No retry succeeds until the connector is given OAuth:
				// said once, then tried again at the backoff's pace.
				attempt++
				if status != toolkit.StatusNeedsAuthorization || errText != nerr.Error() {
					c.logger.Warn("server needs an authorization", "error", nerr)
				}
				status, errText = toolkit.StatusNeedsAuthorization, nerr.Error()
				if st, changed := c.changeState(func(s *toolkit.ConnectorState) {
					s.Status, s.LastError, s.ConnectedSince = status, errText, time.Time{}
				}); changed {
					c.report(ctx, st)
				}
				if c.o.maxAttempts > 0 && attempt >= c.o.maxAttempts {
					c.report(ctx, c.setState(func(s *toolkit.ConnectorState) {
						s.Status, s.LastError = toolkit.StatusFailed, errText
					}))
					c.markStopped()
					return fmt.Errorf("%w: server %s: giving up after %d attempts: %w", errs.ErrUnavailable, c.label(), attempt, nerr)
				}
				if !c.backoff(ctx, attempt) {
					c.stop(ctx)
					return nil
				}
				continue
			}
			// Waiting for a person is no failure; an authorization that
			// failed is one.
			changed, failed, authErr := c.oauthWait()
			if authErr == nil && errors.Is(err, ErrAuthorizationPending) && endedAuth < maxEndedAuth {
				// The attempt found the user being asked, and the
				// authorization ended before this look: no failure of
				// the server's, so the next attempt is made at once.
				endedAuth++
				continue
			}
			endedAuth = 0
			if failed {
				// Say why the authorization failed, not that the
				// attempt found it pending.
				err = authErr
			}
			if authErr == nil || failed {
				attempt++
				c.logger.Warn("connection attempt failed", "attempt", attempt, "error", err)
				if permanent(err) || (c.o.maxAttempts > 0 && attempt >= c.o.maxAttempts) {
					c.report(ctx, c.setState(func(s *toolkit.ConnectorState) {
						s.Status, s.LastError = toolkit.StatusFailed, err.Error()
					}))
					c.markStopped()
					return fmt.Errorf("%w: server %s: giving up after %d attempts: %v", errs.ErrUnavailable, c.label(), attempt, err)
				}
			}
			if authErr != nil {
				errText = err.Error()
				if !c.waitAuthorization(ctx, changed, authErr) {
					c.stop(ctx)
					return nil
				}
				continue
			}
			// Retrying: said at once, not after the backoff.
			status, errText = toolkit.StatusReconnecting, err.Error()
			c.report(ctx, c.setState(func(s *toolkit.ConnectorState) {
				s.Status, s.LastError, s.ConnectedSince = status, errText, time.Time{}
			}))
			if !c.backoff(ctx, attempt) {
				c.stop(ctx)
				return nil
			}
			continue
		}
		up := time.Now()
		lostErr := toolkit.RedactError(c.serve(ctx, l))
		c.leaveReady()
		l.close()
		c.flushNoteLogs()
		if ctx.Err() != nil {
			c.stop(ctx)
			return nil
		}
		c.logger.Warn("connection lost", "error", lostErr)
		status, errText = toolkit.StatusReconnecting, lostErr.Error()
		// The first attempt after a loss is made at once: a crashed server
		// that is back (or restarted by its own supervisor) is reached as
		// soon as it listens. At most one loss a kickFloor (a second) is
		// retried so; the others count as failures and back off, so a
		// server that accepts connections and drops them at once gets
		// growing delays instead of a busy loop.
		if time.Since(up) >= c.o.stableAfter {
			attempt = 0
		}
		delay := 0
		if now := time.Now(); !lastQuick.IsZero() && now.Sub(lastQuick) < c.o.hooks.kickFloor {
			attempt++
			delay = attempt
		} else {
			lastQuick = now
		}
		c.report(ctx, c.setState(func(s *toolkit.ConnectorState) {
			s.Status, s.LastError, s.ConnectedSince = status, errText, time.Time{}
		}))
		if !c.backoff(ctx, delay) {
			c.stop(ctx)
			return nil
		}
	}
}

// permanent reports errors no retry can fix.
func permanent(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

// stop reports the final state.
func (c *Connector) stop(ctx context.Context) {
	c.markStopped()
	c.report(context.WithoutCancel(ctx), c.setState(func(s *toolkit.ConnectorState) {
		s.Status, s.ConnectedSince = toolkit.StatusStopped, time.Time{}
	}))
}

// markStopped records that Run is over and wakes the calls waiting for a
// session: they fail at once with ErrClosed instead of waiting out
// Reconnect.Wait for a session that will not come.
func (c *Connector) markStopped() {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	c.life.stopped = true
	select {
	case <-c.life.readyCh:
	default:
		close(c.life.readyCh)
	}
	c.life.readyCh = make(chan struct{})
}

// backoffDelay returns the delay before attempt (1-based); 0 for attempt 0.
func (c *Connector) backoffDelay(attempt int) time.Duration {
	if attempt <= 0 {
		return 0
	}
	d := c.o.backoffMin
	for i := 1; i < attempt && d < c.o.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.o.backoffMax)
	// Take a random part of up to half the delay off, so that many
	// connectors losing the same server do not come back in step.
	return d - rand.N(d/2+1)
}

// backoff waits before the next attempt; it reports false when ctx ended.
//
// While a call waits for a session (Connector.waiters), the wait is cut to
// kickFloor (one second) after the failed attempt, and so is every wait
// after it until no call waits any more: a server that comes back after a
// long outage is reached soon after somebody needs it, not when a backoff
// of up to OptReconnect's maximum runs out, while an idle connector keeps
// backing off and waiting callers cause at most one attempt a second.
func (c *Connector) backoff(ctx context.Context, attempt int) bool {
	d := c.backoffDelay(attempt)
	if c.o.hooks.beforeBackoff != nil {
		c.o.hooks.beforeBackoff(attempt, d)
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	failed := time.Now()
	var t *time.Timer
	for {
		wait := d
		if c.sig.waiters.Load() > 0 {
			wait = min(d, c.o.hooks.kickFloor)
		}
		rest := wait - time.Since(failed)
		if rest <= 0 {
			return ctx.Err() == nil
		}
		if t == nil {
			t = time.NewTimer(rest)
			defer t.Stop()
		} else {
			t.Reset(rest)
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		case <-c.sig.kick: // a call started waiting: look again
		}
	}
}

// connect makes one connection attempt: handshake, log level,
// subscriptions and the listing of every item. On success the connector is
// ready.
func (c *Connector) connect(ctx context.Context) (*live, error) {
	c.link.dials.Add(1)
	cctx, cancel := context.WithTimeout(ctx, c.o.connectTimeout)
	defer cancel()
	l, err := c.dial(cctx)
	if err != nil {
		return nil, err
	}
	init := l.sess.InitializeResult()
	if init == nil {
		init = &sdk.InitializeResult{}
	}
	caps := init.Capabilities
	if caps == nil {
		caps = &sdk.ServerCapabilities{}
	}
	// A stateless session carries the level in each request (withLogLevel).
	if caps.Logging != nil && c.o.logLevel != "" && !stateless(l.sess) {
		if err := l.sess.SetLoggingLevel(cctx, &sdk.SetLoggingLevelParams{Level: sdk.LoggingLevel(c.o.logLevel)}); err != nil {
			c.logger.Debug("server refused the log level", "error", err)
		}
	}
	// Clear stale signals: everything is listed below.
	c.sig.pending.And(^(sigTools | sigPrompts | sigResources | sigSuspect | sigLost))
	prev := c.snap.Load()
	next, err := c.listAll(cctx, l, caps, prev)
	if err != nil {
		l.close()
		return nil, err
	}
	c.publish(ctx, prev, next, prev.connected)
	if c.o.subscribeResources && caps.Resources != nil && caps.Resources.Subscribe {
		c.subscribe(cctx, l, next)
	}
	c.listSkills(cctx, l, declaresSkillsIn(caps))
	c.enterReady(ctx, l, init)
	if l.listen != nil {
		l.listen.endedEarly(l)
	}
	// After enterReady: a subscription asked for meanwhile went out on l
	// already, and subscribing twice is harmless.
	c.resubscribe(cctx, l)
	return l, nil
}

// enterReady makes l the current session and reports the ready state.
func (c *Connector) enterReady(ctx context.Context, l *live, init *sdk.InitializeResult) {
	ext := c.serverExtensions(init.Capabilities)
	c.life.mu.Lock()
	c.life.cur = l
	s := &c.life.state
	s.Name, s.Version, s.Title = "", "", ""
	if si := init.ServerInfo; si != nil {
		s.Name, s.Version, s.Title = si.Name, si.Version, si.Title
	}
	s.Instructions = init.Instructions
	s.ProtocolVersion = init.ProtocolVersion
	s.Extensions = ext
	s.Status = toolkit.StatusReady
	s.LastError = ""
	s.ConnectedSince = time.Now()
	state := c.life.state
	close(c.life.readyCh)
	c.life.mu.Unlock()
	select {
	case <-c.sig.kick: // whoever asked is served
	default:
	}
	host := uriHost(state.Name)
	if state.Name == "" {
		host = uriHost(c.ep.display)
	}
	c.names.resultHost.Store(&host)
	c.logger.Info("connected", "url", c.ep.display, "server", state.Name, "version", state.Version, "protocol", state.ProtocolVersion, "transport", l.transport)
	c.report(ctx, state)
}

// leaveReady forgets the current session; callers wait for the next one.
func (c *Connector) leaveReady() {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	c.leaveReadyLocked()
}

// leaveReadyLocked is leaveReady with c.life.mu held.
func (c *Connector) leaveReadyLocked() {
	c.life.cur = nil
	select {
	case <-c.life.readyCh:
		c.life.readyCh = make(chan struct{})
	default:
	}
}

// serve watches a ready session until it is lost (returning why) or ctx
// ends (returning nil), and handles the signals of the SDK handlers.
func (c *Connector) serve(ctx context.Context, l *live) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-l.done:
			if l.waitErr != nil {
				return fmt.Errorf("session ended: %w", l.waitErr)
			}
			return errors.New("session closed by the server")
		case <-l.exited():
			return l.stdio.exitError()
		case <-c.sig.wake:
		}
		bits := c.sig.pending.Swap(0)
		reason := c.lastReason()
		if bits&sigLost != 0 {
			return reason
		}
		if bits&sigSuspect != 0 {
			if err := c.ping(ctx, l); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("%v; ping failed: %w", reason, err)
			}
			if l.listen != nil && l.listen.hasEnded() {
				// The server answers, but one of its listen streams
				// broke: connect again to open it again (listen.go).
				return fmt.Errorf("%v: %w", reason, errListenEnded)
			}
		}
		if kinds := bits & (sigTools | sigPrompts | sigResources); kinds != 0 {
			err := c.refresh(ctx, l, kinds)
			if c.o.hooks.afterRefresh != nil {
				c.o.hooks.afterRefresh(kinds, err)
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if !isRemoteError(err) {
					return fmt.Errorf("refreshing lists: %w", err)
				}
				c.logger.Warn("refreshing lists failed", "error", err)
			}
		}
		if bits&sigUpdated != 0 {
			c.deliverUpdates(ctx)
		}
		if bits&sigAuth != 0 {
			if _, failed, err := c.oauthWait(); err != nil && failed {
				// No token, and none before the next attempt: the
				// session is of no use.
				return err
			}
			c.report(ctx, c.State())
		}
	}
}

// waitAuthorization waits, in the state that says so, while the OAuth
// handler waits for an authorization (the user is asked, or a failure is
// waited out), until the next connection attempt may be made; it reports
// false when ctx ended.
func (c *Connector) waitAuthorization(ctx context.Context, changed <-chan struct{}, why error) bool {
	for why != nil {
		c.report(ctx, c.setState(func(s *toolkit.ConnectorState) {
			s.Status, s.LastError, s.ConnectedSince = toolkit.StatusNeedsAuthorization, authReason(why), time.Time{}
		}))
		select {
		case <-ctx.Done():
			return false
		case <-changed:
		}
		changed, _, why = c.oauthWait()
	}
	return true
}

// ping checks that the server of l still answers. A JSON-RPC error can
// be an answer too:
//   - on protocol 2026-07-28, which removed ping and keeps no session to
//     lose, any JSON-RPC error (the go-sdk's client sends ping without the
//     _meta that protocol wants, and its server refuses it so);
//   - on older ones, "method not found" (a server that never implemented
//     ping); any other error, JSON-RPC ones included (a server that lost
//     the session may say so in one), fails the check.
func (c *Connector) ping(ctx context.Context, l *live) error {
	pctx, cancel := context.WithTimeout(ctx, c.o.connectTimeout)
	defer cancel()
	err := l.sess.Ping(pctx, nil)
	if je := (*jsonrpc.Error)(nil); errors.As(err, &je) && (stateless(l.sess) || je.Code == jsonrpc.CodeMethodNotFound) {
		return nil
	}
	return err
}

// refresh re-lists the kinds of items in bits and fires the callbacks of
// those that changed.
func (c *Connector) refresh(ctx context.Context, l *live, bits uint32) error {
	rctx, cancel := context.WithTimeout(ctx, c.o.connectTimeout)
	defer cancel()
	prev := c.snap.Load()
	next := *prev
	var err error
	if bits&sigTools != 0 {
		if next.tools, next.toolFP, err = listKind(rctx, c, l, toolSpec, prev.tools); err != nil {
			return err
		}
	}
	if bits&sigPrompts != 0 {
		if next.prompts, next.promptFP, err = listKind(rctx, c, l, promptSpec, prev.prompts); err != nil {
			return err
		}
	}
	if bits&sigResources != 0 {
		// resources/list_changed also covers the templates.
		if next.resources, next.resourceFP, err = listKind(rctx, c, l, resourceSpec, prev.resources); err != nil {
			return err
		}
		if next.templates, next.templateFP, err = listKind(rctx, c, l, templateSpec, prev.templates); err != nil {
			return err
		}
		if c.o.subscribeResources {
			c.subscribe(rctx, l, &next)
		}
		c.listSkills(rctx, l, c.declaresSkills())
	}
	c.publish(ctx, prev, &next, true)
	return nil
}

// publish stores next and, when fire is set, calls the callbacks of the
// kinds that differ from prev.
func (c *Connector) publish(ctx context.Context, prev, next *catalog, fire bool) {
	next.connected = true
	c.snap.Store(next)
	if !fire {
		return
	}
	if c.o.onTools != nil && !sameFingerprints(prev.toolFP, next.toolFP) {
		c.o.onTools(ctx)
	}
	if c.o.onPrompts != nil && !sameFingerprints(prev.promptFP, next.promptFP) {
		c.o.onPrompts(ctx)
	}
	if c.o.onResources != nil && (!sameFingerprints(prev.resourceFP, next.resourceFP) || !sameFingerprints(prev.templateFP, next.templateFP)) {
		c.o.onResources(ctx)
	}
}

// subscribe asks for updates of every resource of cat.
func (c *Connector) subscribe(ctx context.Context, l *live, cat *catalog) {
	uris := make([]string, len(cat.resources))
	for i, r := range cat.resources {
		uris[i] = r.URI()
	}
	c.subscribeEach(ctx, l, uris)
}

// subscribeEach subscribes to each URI on l, logging failures.
func (c *Connector) subscribeEach(ctx context.Context, l *live, uris []string) {
	for _, uri := range uris {
		if err := l.sess.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			c.logger.Warn("subscribing to a resource failed", "uri", uri, "error", err)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// deliverUpdates hands queued resource updates to the callback.
func (c *Connector) deliverUpdates(ctx context.Context) {
	c.sig.updMu.Lock()
	uris := c.sig.updated
	c.sig.updated = nil
	c.sig.updMu.Unlock()
	for _, u := range uris {
		c.o.onResourceUpdated(ctx, u)
	}
}
