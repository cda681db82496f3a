package testserver

import (
	"context"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Memory serves a server over in-memory transports: each Dial makes a new
// pair and connects the server to one end.
type Memory struct {
	Server *sdk.Server

	dials    atomic.Int64
	mu       sync.Mutex
	sessions []*sdk.ServerSession
	conns    []*connTracker // the server ends of the sessions, for Kill
	down     bool
}

// connTracker remembers the connection its transport made.
type connTracker struct {
	sdk.Transport
	mu   sync.Mutex
	conn sdk.Connection
}

func (t *connTracker) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, err
}

func (t *connTracker) close() {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// NewMemory returns a Memory serving s.
func NewMemory(s *sdk.Server) *Memory { return &Memory{Server: s} }

// Dial returns the client end of a fresh in-memory connection to the
// server. While the server is down (Kill) the client's handshake fails.
func (m *Memory) Dial(ctx context.Context) (sdk.Transport, error) {
	m.dials.Add(1)
	ct, st := sdk.NewInMemoryTransports()
	m.mu.Lock()
	down := m.down
	m.mu.Unlock()
	if down {
		// Nobody answers: close the server end so the handshake fails.
		c, err := st.Connect(ctx)
		if err == nil {
			c.Close()
		}
		return ct, nil
	}
	tt := &connTracker{Transport: st}
	ss, err := m.Server.Connect(ctx, tt, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.conns = append(m.conns, tt)
	m.mu.Unlock()
	return ct, nil
}

// Dials reports how many times Dial was called.
func (m *Memory) Dials() int64 { return m.dials.Load() }

// Kill ends every server session like a crash and makes later dials fail
// until Start: the connections are cut first, which cancels the handlers
// still running (a graceful ServerSession.Close would wait for them), then
// the sessions are closed.
func (m *Memory) Kill() {
	m.mu.Lock()
	m.down = true
	ss, cs := m.sessions, m.conns
	m.sessions, m.conns = nil, nil
	m.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
	for _, s := range ss {
		s.Close()
	}
}

// Drop closes every server session; later dials work.
func (m *Memory) Drop() {
	m.mu.Lock()
	ss := m.sessions
	m.sessions, m.conns = nil, nil
	m.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
}

// Start lets dials succeed again after Kill.
func (m *Memory) Start() {
	m.mu.Lock()
	m.down = false
	m.mu.Unlock()
}

// Close closes every server session.
func (m *Memory) Close() { m.Drop() }
