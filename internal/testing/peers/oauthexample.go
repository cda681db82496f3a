package peers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// The TypeScript SDK's example OAuth server: its streamable HTTP example
// server started with --oauth, which starts the SDK's demo in-memory
// authorization server beside it (see doc.go).

const (
	// oauthReadyText is what the example server writes once its MCP
	// endpoint listens; the authorization server writes its own line
	// before.
	oauthReadyText = "MCP Streamable HTTP Server listening on port"
	// oauthFailedText is what it writes when a port cannot be had.
	oauthFailedText = "Failed to start server"
)

// loopbackPreload is loaded by Node before the example (node --require):
// a listen call that names a port but no host gets the loopback address,
// so that the example's two servers, which name none (and so would listen
// on every interface), listen on 127.0.0.1 only.
const loopbackPreload = `'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^[0-9]+$/.test(first))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (first && typeof first === 'object' && first.port !== undefined && !first.host && !first.path) {
    args[0] = Object.assign({}, first, { host: '127.0.0.1' });
  }
  return listen.apply(this, args);
};
`

// OAuthExample is the TypeScript SDK's example MCP server behind OAuth,
// with its demo authorization server, running on loopback ports.
type OAuthExample struct {
	// URL is the MCP endpoint, http://localhost:PORT/mcp: the example
	// names its resource with localhost, and a client must use the same
	// URL for the resource metadata to match.
	URL string
	// AuthServer is the authorization server's origin,
	// http://localhost:PORT, and Issuer its issuer identifier (the origin
	// with a slash).
	AuthServer, Issuer string

	in       installation
	preload  string
	mcpPort  int
	authPort int

	mu sync.Mutex
	p  *process
}

// StartOAuthExample starts the TypeScript SDK's example OAuth server on
// two free loopback ports and waits until both of its servers answer; ctx
// bounds the start. The server is stopped and reaped when the test ends,
// and on failure its last output is logged. It skips the test when the
// peers are not installed (fails it with PEERS_REQUIRED=1).
func StartOAuthExample(t testing.TB, ctx context.Context) *OAuthExample {
	t.Helper()
	in := usable(t)
	preload := filepath.Join(t.TempDir(), "loopback.cjs")
	if err := os.WriteFile(preload, []byte(loopbackPreload), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &OAuthExample{in: in, preload: preload}
	var err error
	for range portAttempts {
		if s.mcpPort, err = freeLoopbackPort(); err != nil {
			break
		}
		if s.authPort, err = freeLoopbackPort(); err != nil {
			break
		}
		if s.mcpPort == s.authPort {
			continue
		}
		if s.p, err = s.start(ctx); !errors.Is(err, errPortInUse) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start the TypeScript SDK's example OAuth server: %v", err)
	}
	s.URL = "http://localhost:" + strconv.Itoa(s.mcpPort) + "/mcp"
	s.AuthServer = "http://localhost:" + strconv.Itoa(s.authPort)
	s.Issuer = s.AuthServer + "/"
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("example OAuth server at %s, last output:\n%s", s.URL, s.Output())
		}
	})
	return s
}

// start starts one server process and waits until both ports answer.
func (s *OAuthExample) start(ctx context.Context) (*process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(s.in.node, "--require", s.preload, s.in.oauthExample, "--oauth")
	cmd.Dir = s.in.root
	cmd.Env = append(os.Environ(), "MCP_PORT="+strconv.Itoa(s.mcpPort), "MCP_AUTH_PORT="+strconv.Itoa(s.authPort))
	p, err := startProcess(cmd, oauthReadyText)
	if err != nil {
		return nil, err
	}
	mcpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.mcpPort))
	authAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.authPort))
	probe := func(ctx context.Context) error {
		if err := probeHTTP(ctx, mcpAddr); err != nil {
			return err
		}
		return probeHTTP(ctx, authAddr)
	}
	if err := p.waitReady(ctx, startTimeout, probe); err != nil {
		if p.out.contains(oauthFailedText) || p.out.contains("EADDRINUSE") {
			return nil, fmt.Errorf("%w: %d or %d", errPortInUse, s.mcpPort, s.authPort)
		}
		return nil, err
	}
	return p, nil
}

// Output returns the last lines the server wrote.
func (s *OAuthExample) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.out.String()
}

// Stop ends the server (SIGTERM to its process group, SIGKILL after a
// grace period) and reaps it. It is idempotent.
func (s *OAuthExample) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.stop()
}

// freeLoopbackPort returns a TCP port that was free on the loopback
// interface a moment ago.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
