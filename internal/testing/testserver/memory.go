package testserver

import (
	"context"
	"net"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Memory serves a server over in-memory connections: each Dial makes a new
// pipe and connects the server to one end. Memory keeps the server ends, so
// that Kill can cut them.
type Memory struct {
	Server *sdk.Server

	dials    atomic.Int64
	mu       sync.Mutex
	sessions []*sdk.ServerSession
	conns    []net.Conn // the server ends of the sessions' pipes, for Kill
	down     bool
}

// NewMemory returns a Memory serving s.
func NewMemory(s *sdk.Server) *Memory { return &Memory{Server: s} }

// Dial returns the client end of a fresh in-memory connection to the
// server. While the server is down (Kill) the client's handshake fails.
func (m *Memory) Dial(ctx context.Context) (sdk.Transport, error) {
	m.dials.Add(1)
	cp, sp := net.Pipe()
	ct := &sdk.IOTransport{Reader: cp, Writer: cp}
	m.mu.Lock()
	down := m.down
	m.mu.Unlock()
	if down {
		// Nobody answers: close the server end so the handshake fails.
		sp.Close()
		return ct, nil
	}
	ss, err := m.Server.Connect(ctx, &sdk.IOTransport{Reader: sp, Writer: sp}, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.conns = append(m.conns, sp)
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
		c.Close()
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
