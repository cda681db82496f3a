package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Tokens per subject. The flows that act for a user who is already
// authenticated ([TokenExchange], [Enterprise]) get a token for each
// subject — the person whose credential a request's context carries — and
// keep it for that subject only: a token obtained for one subject is never
// served for another. Subjects are told apart by a hash of their
// credential (the access token or ID token the context gives), so no
// principal name is trusted and none is kept. No person is asked, so
// these flows do not run through the gates of flight.go: one subject's
// exchange, or its failure, never holds up another's.

// Bounds of the tokens kept per subject.
const (
	// DefaultMaxSubjects is how many subjects' tokens a handler keeps
	// when its flow does not say: past it, expired tokens go first, then
	// those expiring soonest.
	DefaultMaxSubjects = 10000
	// DefaultExchangeTimeout bounds one discovery and exchange, when the
	// flow does not say.
	DefaultExchangeTimeout = 30 * time.Second
	// failedExchangeWait is how long a subject's failed exchange is
	// remembered (longer when the authorization server asks so with
	// Retry-After): requests of that subject meanwhile get its error
	// without a new request to the authorization server.
	failedExchangeWait = 5 * time.Second
)

// subject is the credential a request's context carries and the key of
// its tokens.
type subject struct {
	token, tokenType string
	key              string // hash of tokenType and token
}

// newSubject returns the subject of a credential.
func newSubject(token, tokenType string) subject {
	sum := sha256.Sum256([]byte(tokenType + "\x00" + token))
	return subject{token: token, tokenType: tokenType, key: hex.EncodeToString(sum[:])}
}

// target is where the tokens of a resource come from: its metadata and
// its authorization server's.
type target struct {
	prm *oauthex.ProtectedResourceMetadata
	asm *oauthex.AuthServerMeta
}

// A subjectFlow gets access tokens for the subject of a request.
type subjectFlow interface {
	// subject returns the subject the context carries.
	subject(ctx context.Context) (subject, error)
	// obtain gets an access token for s from the authorization server of
	// t, asking for scopes, with hc.
	obtain(ctx context.Context, hc *http.Client, s subject, t *target, scopes []string) (*oauth2.Token, error)
	// scopes returns the scopes configured (nil: the server's).
	scopes() []string
}

// subjectHandler implements auth.OAuthHandler for a subjectFlow: on a
// 401 it finds the resource's authorization server (once, again after a
// failure) and obtains a token for the request's subject, one exchange at
// a time per subject; its token source serves each subject its own token.
type subjectHandler struct {
	flow     subjectFlow
	resource string // the protected resource's URL
	hc       *http.Client
	clock    func() clock
	timeout  time.Duration
	max      int
	onError  func(error) // told of each failed exchange (logged)

	mu       sync.Mutex
	tgt      *target
	tokens   map[string]*subjectToken
	inflight map[string]*exchangeCall
}

// subjectToken is the token of one subject, or its failure.
type subjectToken struct {
	sub      subject
	tok      *oauth2.Token
	obtained time.Time
	scopes   []string  // asked for it: asked for again when it expires
	err      error     // the last exchange failed with it
	until    time.Time // and is remembered until then
}

// exchangeCall is an exchange in flight for one subject.
type exchangeCall struct {
	done   chan struct{}
	err    error
	cancel context.CancelFunc // ends it (stop)
}

func newSubjectHandler(flow subjectFlow, resource string, hc *http.Client, clk func() clock, timeout time.Duration, max int, onError func(error)) *subjectHandler {
	if timeout <= 0 {
		timeout = DefaultExchangeTimeout
	}
	if max <= 0 {
		max = DefaultMaxSubjects
	}
	return &subjectHandler{flow: flow, resource: resource, hc: hc, clock: clk, timeout: timeout, max: max, onError: onError,
		tokens: map[string]*subjectToken{}, inflight: map[string]*exchangeCall{}}
}

// TokenSource implements auth.OAuthHandler: the source gives the token
// of the subject ctx carries when there is a fresh one, else none (the
// server's 401 then has one obtained).
func (h *subjectHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return subjectSource{h: h, ctx: ctx}, nil
}

type subjectSource struct {
	h   *subjectHandler
	ctx context.Context
}

// Token implements oauth2.TokenSource. A token about to expire is
// exchanged again here, with the source's context (the SDK's streamable
// transport gives the one of Connect, which carries the subject), so that
// the server never has to refuse it; when that fails the request goes
// without a token and the server's 401 has the failure reported.
func (s subjectSource) Token() (*oauth2.Token, error) {
	sub, err := s.h.flow.subject(s.ctx)
	if err != nil {
		return nil, nil // Authorize reports it
	}
	if tok, stale := s.h.fresh(sub.key); tok != nil || !stale {
		return tok, nil
	}
	if err := s.h.obtain(s.ctx, sub, nil, ""); err != nil {
		return nil, nil
	}
	tok, _ := s.h.fresh(sub.key)
	return tok, nil
}

// fresh returns the fresh token of the subject key, or nil, and whether
// the subject has a token that is no longer fresh from an authorization
// server the handler knows.
func (h *subjectHandler) fresh(key string) (tok *oauth2.Token, stale bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.tokens[key]
	if st == nil || st.tok == nil {
		return nil, false
	}
	if fresh(st.tok, st.obtained, h.clock().Now()) {
		return st.tok, false
	}
	return nil, h.tgt != nil
}

// summary tells whether the handler holds a fresh token of any subject,
// whether an exchange is in flight, and whether a failure is remembered
// (an exchange failed and waits to be tried again).
func (h *subjectHandler) summary() (held, exchanging, failed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock().Now()
	for _, st := range h.tokens {
		switch {
		case st.tok != nil && fresh(st.tok, st.obtained, now):
			held = true
		case st.err != nil && now.Before(st.until):
			failed = true
		}
	}
	return held, len(h.inflight) > 0, failed
}

// subjectOf returns the subject the access token tok was obtained for.
func (h *subjectHandler) subjectOf(tok string) (subject, bool) {
	if tok == "" {
		return subject{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, st := range h.tokens {
		if st.tok != nil && st.tok.AccessToken == tok {
			return st.sub, true
		}
	}
	return subject{}, false
}

// Authorize implements auth.OAuthHandler.
func (h *subjectHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("WWW-Authenticate: %w", err)
	}
	if resp.StatusCode == http.StatusForbidden && !hasChallengeError(challenges, "insufficient_scope") {
		// Not a matter of authorization (as the SDK's handlers do): the
		// request is sent again and its answer handled as usual.
		return nil
	}
	sent := bearerOf(req)
	sub, err := h.flow.subject(ctx)
	if err != nil {
		// The request's context may not carry the subject when the
		// connection's does: the token sent tells whose it is.
		var ok bool
		if sub, ok = h.subjectOf(sent); !ok {
			return err
		}
	}
	return h.obtain(ctx, sub, challenges, sent)
}

// obtain gets a token for sub, unless another request of the subject
// just got one (another token than sent), or its last failure is still
// remembered: it starts the subject's exchange, or joins the one in
// flight, and waits for it within ctx. challenges are those of the
// server's refusal (nil: none).
func (h *subjectHandler) obtain(ctx context.Context, sub subject, challenges []oauthex.Challenge, sent string) error {
	for {
		h.mu.Lock()
		if st := h.tokens[sub.key]; st != nil {
			now := h.clock().Now()
			switch {
			case st.err != nil && now.Before(st.until):
				h.mu.Unlock()
				return st.err
			case st.tok != nil && st.tok.AccessToken != sent && fresh(st.tok, st.obtained, now):
				// Another request of the subject got a new token.
				h.mu.Unlock()
				return nil
			}
		}
		c := h.inflight[sub.key]
		own := c == nil
		if own {
			// The exchange outlives the request that started it (others
			// of the subject may wait for it), bounded by the timeout.
			xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeout)
			c = &exchangeCall{done: make(chan struct{}), cancel: cancel}
			h.inflight[sub.key] = c
			h.mu.Unlock()
			go func() {
				defer cancel()
				h.run(xctx, c, sub, challenges)
			}()
		} else {
			h.mu.Unlock()
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if own || c.err != nil {
			return c.err
		}
		// Joined another request's exchange: its token is checked above.
		sent = ""
	}
}

// run makes the exchange c for sub and keeps its outcome.
func (h *subjectHandler) run(ctx context.Context, c *exchangeCall, sub subject, challenges []oauthex.Challenge) {
	tok, scopes, err := h.exchange(ctx, sub, challenges)
	now := h.clock().Now()
	h.mu.Lock()
	delete(h.inflight, sub.key)
	if err != nil {
		h.tgt = nil // found again next time
		var se *ServerError
		if errors.As(err, &se) || errors.Is(err, ErrDestinationRefused) || errors.Is(err, ErrExchangeRefused) {
			wait := failedExchangeWait
			if se != nil && se.RetryAfter > wait {
				wait = se.RetryAfter
			}
			h.keepLocked(sub.key, &subjectToken{sub: sub, err: err, until: now.Add(wait)}, now)
		} else {
			delete(h.tokens, sub.key)
		}
	} else {
		h.keepLocked(sub.key, &subjectToken{sub: sub, tok: tok, obtained: now, scopes: scopes}, now)
	}
	h.mu.Unlock()
	if err != nil && h.onError != nil {
		h.onError(err)
	}
	c.err = err
	close(c.done)
}

// stop ends the exchanges in flight and waits until they have ended.
func (h *subjectHandler) stop() {
	h.mu.Lock()
	calls := make([]*exchangeCall, 0, len(h.inflight))
	for _, c := range h.inflight {
		calls = append(calls, c)
	}
	h.mu.Unlock()
	for _, c := range calls {
		c.cancel()
		<-c.done
	}
}

// keepLocked keeps st for key, making room when the handler keeps as
// many subjects as it may: expired tokens and failures go first, then
// the token expiring soonest; h.mu is held.
func (h *subjectHandler) keepLocked(key string, st *subjectToken, now time.Time) {
	if _, ok := h.tokens[key]; !ok && len(h.tokens) >= h.max {
		for k, t := range h.tokens {
			if (t.err != nil && !now.Before(t.until)) || (t.tok != nil && !fresh(t.tok, t.obtained, now)) {
				delete(h.tokens, k)
			}
		}
		for len(h.tokens) >= h.max {
			var victim string
			var soonest time.Time
			for k, t := range h.tokens {
				at := t.until
				if t.tok != nil {
					at = t.tok.Expiry
					if at.IsZero() {
						at = t.obtained.Add(100 * 365 * 24 * time.Hour)
					}
				}
				if victim == "" || at.Before(soonest) {
					victim, soonest = k, at
				}
			}
			delete(h.tokens, victim)
		}
	}
	h.tokens[key] = st
}

// exchange finds the resource's authorization server, if needed, and
// obtains a token for sub, asking for the scopes configured, else those
// of the server's challenge, else those asked for the subject's last
// token, else those of the resource's metadata; it returns them.
func (h *subjectHandler) exchange(ctx context.Context, sub subject, challenges []oauthex.Challenge) (*oauth2.Token, []string, error) {
	h.mu.Lock()
	t := h.tgt
	var last []string
	if st := h.tokens[sub.key]; st != nil {
		last = st.scopes
	}
	h.mu.Unlock()
	if t == nil {
		var err error
		if t, err = discoverTarget(ctx, challenges, h.resource, h.hc); err != nil {
			return nil, nil, err
		}
		h.mu.Lock()
		h.tgt = t
		h.mu.Unlock()
	}
	scopes := h.flow.scopes()
	if len(scopes) == 0 {
		scopes = challengeScopes(challenges)
	}
	if len(scopes) == 0 {
		scopes = last
	}
	if len(scopes) == 0 {
		scopes = t.prm.ScopesSupported
	}
	tok, err := h.flow.obtain(ctx, h.hc, sub, t, scopes)
	if err != nil {
		return nil, nil, err
	}
	if tok == nil || tok.AccessToken == "" {
		return nil, nil, fmt.Errorf("%w: no access token", ErrExchangeRefused)
	}
	if !tok.Expiry.IsZero() && !tok.Expiry.After(time.Now()) {
		return nil, nil, fmt.Errorf("%w: the access token issued had already expired", ErrExchangeRefused)
	}
	if c := h.clock(); c != nil {
		if _, real := c.(realClock); !real && !tok.Expiry.IsZero() {
			t := *tok
			t.Expiry = c.Now().Add(time.Until(tok.Expiry))
			tok = &t
		}
	}
	return tok, scopes, nil
}

// discoverTarget finds the protected resource metadata of resource and
// the metadata of its (first) authorization server, or the 2025-03-26
// default endpoints when it publishes none.
func discoverTarget(ctx context.Context, challenges []oauthex.Challenge, resource string, hc *http.Client) (*target, error) {
	prm, err := discoverResource(ctx, challenges, resource, hc)
	if err != nil {
		return nil, err
	}
	asURL := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, asURL, hc)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil { // 2025-03-26 default endpoints
		asm = &oauthex.AuthServerMeta{Issuer: asURL, TokenEndpoint: strings.TrimRight(asURL, "/") + "/token"}
	}
	return &target{prm: prm, asm: asm}, nil
}
