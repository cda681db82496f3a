package mcp

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// SubscribeResource returns once the server follows the resource, with
// either protocol version: an update the server sends right after it
// reaches the caller. With protocol 2026-07-28 the go-sdk's client sends
// its subscriptions/listen request and returns at once; the connector
// waits for the server's acknowledgement (a gateway answered its client
// before then, and lost the updates in between).
func TestSubscribeResourceWaitsForServer(t *testing.T) {
	for _, protocol := range []string{StatefulProtocolVersion, StatelessProtocolVersion} {
		t.Run(protocol, func(t *testing.T) {
			leakCheck(t)
			entered := make(chan struct{}, 1)
			release := make(chan struct{})
			s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{
				SubscribeHandler: func(context.Context, *sdk.SubscribeRequest) error {
					entered <- struct{}{}
					<-release
					return nil
				},
				UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
				Logger:             slog.New(slog.DiscardHandler),
			}})
			m := testserver.NewMemory(s.Server)
			t.Cleanup(m.Close)
			updates := make(chan string, 10)
			r := start(t, "memory://subs", false, OptDialer(m.Dial), OptProtocolVersion(protocol),
				OptOnResourceUpdated(func(_ context.Context, uri string) { updates <- uri }))

			done := make(chan error, 1)
			go func() { done <- r.Connector.SubscribeResource(context.Background(), testserver.TextURI) }()
			<-entered
			select {
			case err := <-done:
				t.Fatalf("SubscribeResource returned (%v) before the server took the subscription on", err)
			default:
			}
			close(release)
			mustNotErr(t, <-done)
			mustNotErr(t, s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
			if uri := recvString(t, updates); uri != testserver.TextURI {
				t.Errorf("update of %q", uri)
			}
		})
	}
}

// A subscription the server does not take on before the caller gives up
// fails with ErrUnavailable, and its subscriptions/listen stream is closed
// (the server sees its request cancelled): nothing is left half made.
func TestSubscribeResourceAbandoned(t *testing.T) {
	leakCheck(t)
	entered := make(chan struct{}, 1)
	left := make(chan error, 1)
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{
		SubscribeHandler: func(ctx context.Context, _ *sdk.SubscribeRequest) error {
			entered <- struct{}{}
			<-ctx.Done()
			left <- ctx.Err()
			return ctx.Err()
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		Logger:             slog.New(slog.DiscardHandler),
	}})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://subs", false, OptDialer(m.Dial), OptProtocolVersion(StatelessProtocolVersion))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Connector.SubscribeResource(ctx, testserver.TextURI) }()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("SubscribeResource = %v, want ErrUnavailable", err)
	}
	select {
	case err := <-left:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the server's listen request ended with %v, want it cancelled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the server's listen request is still open")
	}
	// Not counted: the next subscription to the resource is sent again.
	go func() { done <- r.Connector.SubscribeResource(context.Background(), testserver.TextURI) }()
	select {
	case <-entered:
	case err := <-done:
		t.Fatalf("SubscribeResource = %v without asking the server", err)
	}
}

// TestSubscribeResourceInFlight: while a 2026-07-28 server has not yet
// acknowledged the subscription of one URI, the connector's subscription
// of another goes on; a second subscription of the first URI waits for
// the one in flight without being sent again, and is kept; an
// unsubscription made while a subscription is in flight wins once it is
// made.
func TestSubscribeResourceInFlight(t *testing.T) {
	leakCheck(t)
	entered := make(chan struct{}, 4)
	release := make(chan struct{}, 4)
	var mu sync.Mutex
	sent := map[string]int{}
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{
		SubscribeHandler: func(ctx context.Context, req *sdk.SubscribeRequest) error {
			mu.Lock()
			sent[req.Params.URI]++
			mu.Unlock()
			if req.Params.URI == testserver.TextURI {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		Logger:             slog.New(slog.DiscardHandler),
	}})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://subs", false, OptDialer(m.Dial), OptProtocolVersion(StatelessProtocolVersion))
	c := r.Connector
	ctx := context.Background()
	subscribe := func(uri string) <-chan error {
		done := make(chan error, 1)
		go func() { done <- c.SubscribeResource(ctx, uri) }()
		return done
	}
	state := func(uri string) (n int, on bool) {
		c.subs.mu.Lock()
		defer c.subs.mu.Unlock()
		return c.subs.by[uri], c.subs.on[uri]
	}

	first := subscribe(testserver.TextURI)
	<-entered
	// Another URI's subscription does not wait for the first one's
	// acknowledgement.
	mustNotErr(t, recvErr(t, subscribe(testserver.BlobURI)))
	second := subscribe(testserver.TextURI)
	release <- struct{}{}
	mustNotErr(t, recvErr(t, first))
	mustNotErr(t, recvErr(t, second))
	mu.Lock()
	if n := sent[testserver.TextURI]; n != 1 {
		t.Errorf("the resource was subscribed to %d times on the server, want once", n)
	}
	mu.Unlock()
	if n, on := state(testserver.TextURI); n != 2 || !on {
		t.Errorf("after two subscriptions: %d counted, subscribed %v", n, on)
	}
	mustNotErr(t, c.UnsubscribeResource(ctx, testserver.TextURI))
	mustNotErr(t, c.UnsubscribeResource(ctx, testserver.TextURI))
	if n, on := state(testserver.TextURI); n != 0 || on {
		t.Fatalf("after both unsubscriptions: %d counted, subscribed %v", n, on)
	}

	// Unsubscribed while the subscription is in flight: the
	// unsubscription returns at once and wins.
	third := subscribe(testserver.TextURI)
	<-entered
	mustNotErr(t, c.UnsubscribeResource(ctx, testserver.TextURI))
	release <- struct{}{}
	mustNotErr(t, recvErr(t, third))
	if n, on := state(testserver.TextURI); n != 0 || on {
		t.Errorf("unsubscribed during the subscription: %d counted, subscribed %v", n, on)
	}
	mustNotErr(t, r.stop(t))
}

// recvErr returns the next error of ch, or fails the test after
// waitLimit.
func recvErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(waitLimit):
		t.Fatal("no answer")
		return nil
	}
}
