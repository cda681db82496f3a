package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names as the gateway serves them (qualified_names: true).
const (
	echoTool   = "example_echo"
	whoamiTool = "example_whoami"
	echoPrefix = "example-server says: " // the upstream's echo prefixes its name
)

// Protocol versions the clients speak: the SDK's newest, without sessions,
// and the newest with them.
const (
	protocolNew     = "2026-07-28"
	protocolSession = "2025-11-25"
)

// callTimeout bounds every call: a call that reaches it is a hang.
const callTimeout = 10 * time.Second

// newHTTPClient returns an HTTP client whose connection pool holds as many
// idle connections as the test has clients, so that calls reuse them.
func newHTTPClient(t testing.TB) *http.Client {
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// connect opens an MCP session on url speaking version.
func connect(ctx context.Context, hc *http.Client, url, version string) (*sdk.ClientSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "scaleout-test", Version: "0.0.1"}, nil)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: version})
}

// errWrong marks a call that returned, but not what it should have: a
// correctness failure, never acceptable, unlike a clean error.
var errWrong = errors.New("wrong result")

// echo calls the echo tool with text and checks the answer.
func echo(ctx context.Context, cs *sdk.ClientSession, text string) error {
	got, err := callText(ctx, cs, echoTool, map[string]any{"text": text})
	if err != nil {
		return err
	}
	if want := echoPrefix + text; got != want {
		return fmt.Errorf("%w: echo answered %q, want %q", errWrong, got, want)
	}
	return nil
}

// whoami returns the process id of the upstream that served the call: each
// replica has its own, so it names the replica.
func whoami(ctx context.Context, cs *sdk.ClientSession) (int, error) {
	text, err := callText(ctx, cs, whoamiTool, map[string]any{})
	if err != nil {
		return 0, err
	}
	var out struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil || out.PID == 0 {
		return 0, fmt.Errorf("%w: whoami answered %q", errWrong, text)
	}
	return out.PID, nil
}

// callText calls a tool and returns its one text content.
func callText(ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	text := strings.Join(texts, "")
	if res.IsError {
		return "", fmt.Errorf("%w: %s reported an error: %s", errWrong, name, text)
	}
	return text, nil
}

// hang reports whether err is a call that reached its deadline.
func hang(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

// upstreamPIDs asks each replica directly (not through haproxy) for the
// process id of its upstream, and returns the replica index of each.
func upstreamPIDs(t *testing.T, hc *http.Client, rs []*replica) map[int]int {
	t.Helper()
	out := map[int]int{}
	for i, r := range rs {
		cs, err := connect(t.Context(), hc, "http://"+r.addr+"/mcp", protocolSession)
		if err != nil {
			t.Fatalf("replica %s: %v", r.name, err)
		}
		pid, err := whoami(t.Context(), cs)
		cs.Close()
		if err != nil {
			t.Fatalf("replica %s: whoami: %v", r.name, err)
		}
		out[pid] = i
	}
	if len(out) != len(rs) {
		t.Fatalf("replicas share upstream process ids: %v", out)
	}
	return out
}

// errorKinds counts error messages by their text, with numbers removed so
// that alike errors count together; for reports.
type errorKinds struct {
	mu sync.Mutex
	n  map[string]int
}

func (k *errorKinds) add(err error) {
	msg := err.Error()
	msg = strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, msg)
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n == nil {
		k.n = map[string]int{}
	}
	k.n[msg]++
}

func (k *errorKinds) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var b strings.Builder
	for msg, n := range k.n {
		fmt.Fprintf(&b, "\n  %d× %s", n, msg)
	}
	return b.String()
}

// latencies collects call durations; for reports.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = append(l.d, d)
}

// String reports the median, the 99th percentile and the maximum.
func (l *latencies) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return "none"
	}
	d := slices.Clone(l.d)
	slices.Sort(d)
	at := func(q float64) time.Duration {
		return d[min(len(d)-1, int(q*float64(len(d))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %v, p99 %v, max %v", at(0.5), at(0.99), d[len(d)-1].Round(10*time.Microsecond))
}

// max returns the longest duration, 0 for none.
func (l *latencies) max() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	return slices.Max(l.d)
}
