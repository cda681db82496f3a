package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// ErrNoClientSession, message "denied by policy: no client session nor principal",
// is wrapped by the error of a call that a connector made with
// OptPerClient refuses because it came from a client without a session
// (protocol 2026-07-28, stateless HTTP) that is anonymous: its upstream
// session could only be shared with other clients. It also matches
// [toolkit.ErrDenied].
var ErrNoClientSession = fmt.Errorf("%w: no client session nor principal", errs.ErrDenied)

// userClient stands for the calls of one principal that come without a
// client session (a client of protocol 2026-07-28, a stateless HTTP
// request) to a connector made with OptPerClient: they share one upstream
// session of their own (with OptOAuthPerUser, authorized as the user),
// which closes when none has started for the idle time
// (ClientSessionLimits.Idle). It asks nothing of anyone itself: the
// requests of the server go to the call that is in flight (see
// answerFor).
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
func (p *perClient) sessionlessClient(principal string) *userClient {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx == nil {
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

// endSessionless closes the upstream sessions of the principals' calls
// without a client session; the connector stops.
func (p *perClient) endSessionless() {
	p.mu.Lock()
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
