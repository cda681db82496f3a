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
	down     bool
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
	ss, err := m.Server.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.mu.Unlock()
	return ct, nil
}

// Dials reports how many times Dial was called.
func (m *Memory) Dials() int64 { return m.dials.Load() }

// Kill closes every server session and makes later dials fail until Start.
func (m *Memory) Kill() {
	m.mu.Lock()
	m.down = true
	ss := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
}

// Drop closes every server session; later dials work.
func (m *Memory) Drop() {
	m.mu.Lock()
	ss := m.sessions
	m.sessions = nil
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
