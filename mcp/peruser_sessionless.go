package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// userSessionIdle is how long the upstream session of a user's calls that
// have no client session of their own (a client of protocol 2026-07-28,
// a stateless HTTP request) stays open after the last of them started.
const userSessionIdle = 10 * time.Minute

// userClient stands for the calls of one user that come without a client
// session: they share one upstream session, authorized as the user, which
// closes when none has started for userSessionIdle. It asks nothing of
// anyone itself: the requests of the server go to the call that is in
// flight (see answerFor).
type userClient struct {
	principal string

	once  sync.Once
	done  chan struct{}
	timer *time.Timer
}

var (
	_ bridge.Client          = (*userClient)(nil)
	_ bridge.ClientPrincipal = (*userClient)(nil)
)

func (u *userClient) Principal() string                     { return u.principal }
func (u *userClient) Capabilities() *sdk.ClientCapabilities { return nil }
func (u *userClient) Done() <-chan struct{}                 { return u.done }
func (u *userClient) OnRootsChanged(func()) func()          { return func() {} }

func (u *userClient) CreateMessage(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return nil, fmt.Errorf("%w: the user's calls have no client session", toolkit.ErrNotImplemented)
}

func (u *userClient) Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return nil, fmt.Errorf("%w: the user's calls have no client session", toolkit.ErrNotImplemented)
}

func (u *userClient) ListRoots(context.Context, *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	return nil, fmt.Errorf("%w: the user's calls have no client session", toolkit.ErrNotImplemented)
}

// end closes the user's upstream session.
func (u *userClient) end() { u.once.Do(func() { close(u.done) }) }

// sessionlessClient returns the client that stands for principal's calls
// without a client session, made if needed, its idle time starting again.
func (p *perUser) sessionlessClient(principal string) *userClient {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		u := &userClient{principal: principal, done: make(chan struct{})}
		u.end()
		return u
	}
	u := p.sessionless[principal]
	if u != nil && u.timer.Stop() {
		u.timer.Reset(p.idle)
		return u
	}
	u = &userClient{principal: principal, done: make(chan struct{})}
	u.timer = time.AfterFunc(p.idle, func() {
		p.mu.Lock()
		if p.sessionless[principal] == u {
			delete(p.sessionless, principal)
		}
		p.mu.Unlock()
		u.end()
	})
	p.sessionless[principal] = u
	return u
}

// endSessionless closes the upstream sessions of the users' calls without
// a client session; the connector stops.
func (p *perUser) endSessionless() {
	p.mu.Lock()
	p.stopped = true
	us := make([]*userClient, 0, len(p.sessionless))
	for _, u := range p.sessionless {
		u.timer.Stop()
		us = append(us, u)
	}
	clear(p.sessionless)
	p.mu.Unlock()
	for _, u := range us {
		u.end()
	}
}
