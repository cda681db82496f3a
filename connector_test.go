package toolkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/names"
)

func TestInferNamespace(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://mcp-server/sse", "mcp-server"},
		{"https://mcp.github.com/mcp", "github"},
		{"https://api.example.co.uk/v1/mcp", "example-co"},
		{"http://localhost:8080/weather/mcp", "weather"},
		{"http://127.0.0.1:9000/mcp", "localhost-9000"},
		{"http://localhost:3001/mcp", "localhost-3001"},
		{"http://[::1]/sse", "localhost"},
		{"http://10.1.2.3:8080/mcp", "host-10-1-2-3"},
		{"stdio:node?arg=build%2Findex.js", "index"},
		{"stdio:node?arg=--inspect&arg=%2Fsrv%2Fweather-tool.mjs", "weather-tool"},
		{"stdio:npx?arg=-y&arg=%40modelcontextprotocol%2Fserver-everything", "everything"},
		{"stdio:npx?arg=-y&arg=%40acme%2Fgithub-mcp-server%401.2.3", "github"},
		{"stdio:uvx?arg=mcp-server-fetch", "fetch"},
		{"stdio:uvx?arg=--from&arg=git%2Bhttps%3A%2F%2Fexample.com%2Fx&arg=jira-mcp", "jira"},
		{"stdio:uv?arg=run&arg=weather.py", "weather"},
		{"stdio:python3?arg=-m&arg=weather_mcp", "weather_mcp"},
		{"stdio:python?arg=-u&arg=tools%2Fsearch_server.py", "search_server"},
		{"stdio:docker?arg=run&arg=-i&arg=ghcr.io%2Fx", "docker"},
		{"stdio:npx", "npx"},
		{"stdio:///usr/local/bin/weather-server", "weather-server"},
		{"stdio:///opt/My Tools/Files.exe", "files"},
		{"http://host/9lives", "mcp-9lives"},
		{"http://user/", ""}, // reserved namespace
		{"not a url", ""},
	}
	for _, tt := range tests {
		got, err := InferNamespace(tt.url)
		if tt.want == "" {
			if !errors.Is(err, ErrBadParameter) {
				t.Errorf("InferNamespace(%q) = %q, %v; want ErrBadParameter", tt.url, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("InferNamespace(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
}

func TestAddConnectorRefusals(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	if err := tk.AddConnector("http://host/weather/mcp"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ns, url string
		want    error
	}{
		{"weather", "http://other/mcp", ErrConflict},
		{"other", "http://host/weather/mcp", ErrConflict},
		{"builtin", "http://x/mcp", ErrBadParameter},
		{"user", "http://x/mcp", ErrBadParameter},
		{"has.dot", "http://x/mcp", ErrBadParameter},
		{"ok", "", ErrBadParameter},
		{"ok", UserConnectorURI, ErrBadParameter},
	}
	for _, tt := range tests {
		if err := tk.AddConnectorNS(tt.ns, tt.url); !errors.Is(err, tt.want) {
			t.Errorf("AddConnectorNS(%q, %q) = %v, want %v", tt.ns, tt.url, err, tt.want)
		}
	}
	if err := tk.AddConnector("http://elsewhere/weather"); !errors.Is(err, ErrConflict) {
		t.Errorf("inferred namespace collision: %v", err)
	}
	if err := mustNew(t).AddConnector("http://x/y"); !errors.Is(err, ErrBadParameter) {
		t.Errorf("no delegate: %v", err)
	}
	if err := tk.RemoveConnector("http://nowhere"); !errors.Is(err, ErrNotFound) {
		t.Errorf("remove unknown: %v", err)
	}
	if err := tk.RemoveConnector(UserConnectorURI); !errors.Is(err, ErrBadParameter) {
		t.Errorf("remove user: %v", err)
	}
}

func TestCreateConnectorFailureLeavesNothing(t *testing.T) {
	d := newDelegate()
	boom := errors.New("cannot dial")
	d.prepare = func(url string, c *fakeConn) error {
		if url == "http://bad/x" {
			return boom
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d))
	if err := tk.AddConnectorNS("bad", "http://bad/x"); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if n := len(tk.Connectors()); n != 1 { // the user connector only
		t.Fatalf("a failed connector stayed registered: %d connectors", n)
	}
	if err := tk.AddConnectorNS("bad", "http://good/x"); err != nil {
		t.Fatalf("the namespace of a failed connector stays taken: %v", err)
	}
}

func TestSlowCreateConnectorBlocksNothing(t *testing.T) {
	d := newDelegate()
	release := make(chan struct{})
	entered := make(chan struct{})
	d.prepare = func(url string, c *fakeConn) error {
		if url == "http://slow/x" {
			close(entered)
			<-release
		}
		if url != UserConnectorURI {
			c.tools = []Tool{newTool("t_" + url[7:11])}
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d), WithTool(newTool("b")))
	stop := running(t, tk)
	errc := make(chan error, 1)
	go func() { errc <- tk.AddConnectorNS("slow", "http://slow/x") }()
	<-entered
	// While the delegate is stuck, the toolkit works.
	if _, err := tk.Lookup(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	if err := tk.AddConnectorNS("fast", "http://fast/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Lookup(t.Context(), "fast.t_fast"); err != nil {
		t.Fatal(err)
	}
	if err := tk.AddConnectorNS("slow", "http://other/x"); !errors.Is(err, ErrConflict) {
		t.Fatalf("a namespace being created is not reserved: %v", err)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Lookup(t.Context(), "slow.t_slow"); err != nil {
		t.Fatal(err)
	}
	<-d.conn("http://slow/x").started
	stop()
}

func TestRemoveWhileCreating(t *testing.T) {
	d := newDelegate()
	release := make(chan struct{})
	entered := make(chan struct{})
	d.prepare = func(url string, c *fakeConn) error {
		if url == UserConnectorURI {
			return nil
		}
		close(entered)
		<-release
		return nil
	}
	tk := mustNew(t, WithDelegate(d))
	errc := make(chan error, 1)
	go func() { errc <- tk.AddConnectorNS("x", "http://x/y") }()
	<-entered
	if err := tk.RemoveConnector("http://x/y"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-errc; !errors.Is(err, ErrConflict) {
		t.Fatalf("AddConnectorNS = %v, want ErrConflict", err)
	}
	if n := len(tk.Connectors()); n != 1 { // the user connector only
		t.Fatalf("connector registered after removal: %d connectors", n)
	}
}

func TestConnectorListChangesAndStates(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	stop := running(t, tk)
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	<-c.started

	// The connector reports its handshake: the toolkit records the state
	// and lists; it does not forward the state event.
	c.mu.Lock()
	c.tools = []Tool{newTool("a")}
	c.mu.Unlock()
	since := time.Now()
	c.onEvent(StateChangeEvent(ConnectorState{Name: "srv", Version: "1.2", Status: StatusReady, ConnectedSince: since, ProtocolVersion: "2025-06-18"}))
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != "srv" || ev.Connector != Connector(c) {
		t.Fatalf("event %+v", ev)
	}
	st := tk.Connectors()
	if len(st) != 2 || st[1].Namespace != UserNamespace || st[0].Status != StatusReady || st[0].Name != "srv" || st[0].Namespace != "srv" || st[0].URL != "http://srv/mcp" || !st[0].ConnectedSince.Equal(since) {
		t.Fatalf("state %+v", st)
	}

	// A list change is re-read before the delegate hears of it.
	d.onEvent = func(ev ConnectorEvent) {
		if _, err := tk.Lookup(t.Context(), "srv.b"); err != nil {
			t.Errorf("delegate told of a change List does not show yet: %v", err)
		}
	}
	c.setTools(newTool("a"), newTool("b"))
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged {
		t.Fatalf("event %v", ev.Kind)
	}
	d.onEvent = nil

	// A notification that changes nothing fires nothing.
	c.mu.Lock()
	same := c.tools
	c.mu.Unlock()
	c.setTools(same...)
	d.noEvent(t, tk)

	// Resource updates are forwarded with the connector.
	c.onEvent(ResourceUpdatedEvent("file:///x"))
	if ev := d.next(t); ev.Kind != ConnectorEventResourceUpdated || ev.URI != "file:///x" || ev.Namespace != "srv" {
		t.Fatalf("event %+v", ev)
	}

	// Bad remote items are skipped, the rest stays.
	c.setTools(newTool("a"), newTool("bad name"), newTool(""), nil, newTool("a"), newTool(string(make([]byte, 200))))
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged {
		t.Fatalf("event %v", ev.Kind)
	}
	resp, _ := tk.List(t.Context(), ListRequest{Namespace: "srv"})
	if resp.Count != 1 || resp.Items[0].Name != "a" {
		t.Fatalf("after bad items: %v", keys(resp))
	}

	if err := tk.RemoveConnector("http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != "srv" {
		t.Fatalf("event %+v", ev)
	}
	if _, err := tk.Lookup(t.Context(), "srv.a"); !errors.Is(err, ErrNotFound) {
		t.Fatal("items of a removed connector remain")
	}
	// Events from a removed connector are dropped.
	c.onEvent(ToolListChangeEvent())
	d.noEvent(t, tk)
	stop()
}

func TestConnectorRestartedWithBackoff(t *testing.T) {
	d := newDelegate()
	var runs atomic.Int32
	again := make(chan struct{}, 10)
	d.prepare = func(url string, c *fakeConn) error {
		if url == UserConnectorURI {
			return nil
		}
		c.run = func(ctx context.Context) error {
			if runs.Add(1) < 3 {
				return fmt.Errorf("connection refused")
			}
			again <- struct{}{}
			<-ctx.Done()
			return nil
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	stop := running(t, tk)
	if err := tk.AddConnectorNS("flaky", "http://flaky/mcp"); err != nil {
		t.Fatal(err)
	}
	<-again
	if n := runs.Load(); n != 3 {
		t.Fatalf("Run called %d times", n)
	}
	stop()
	if st := tk.Connectors(); st[0].Status != StatusStopped {
		t.Fatalf("after Run: %v", st[0].Status)
	}
}

func TestRemoveConnectorFromOnEvent(t *testing.T) {
	d := newDelegate()
	var tk *Toolkit
	removed := make(chan error, 1)
	d.onEvent = func(ev ConnectorEvent) {
		if ev.Namespace == "srv" && ev.Kind == ConnectorEventToolListChanged {
			removed <- tk.RemoveConnector("http://srv/mcp")
		}
	}
	tk = mustNew(t, WithDelegate(d))
	stop := running(t, tk)
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	<-c.started
	c.setTools(newTool("x"))
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	stop()
}

func TestRunTwice(t *testing.T) {
	tk := mustNew(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tk.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tk.Run(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("second Run: %v", err)
	}
	if err := mustNew(t, WithDelegate(newDelegate())).Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestUserNamespaceFollowsStore(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	u := d.conn(UserConnectorURI)
	stop := running(t, tk)
	<-u.started
	u.mu.Lock()
	u.prompts = []Prompt{&testPrompt{name: "draft"}}
	u.mu.Unlock()
	u.onEvent(PromptListChangeEvent())
	if ev := d.next(t); ev.Kind != ConnectorEventPromptListChanged || ev.Namespace != UserNamespace {
		t.Fatalf("event %+v", ev)
	}
	if _, err := tk.Lookup(t.Context(), "user.draft"); err != nil {
		t.Fatal(err)
	}
	stop()
}

func TestNoUserConnector(t *testing.T) {
	d := &noUserDelegate{fakeDelegate: newDelegate()}
	tk := mustNew(t, WithDelegate(d))
	if _, err := tk.List(t.Context(), ListRequest{Namespace: UserNamespace}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("user namespace without a store: %v", err)
	}
}

type noUserDelegate struct{ *fakeDelegate }

func (d *noUserDelegate) CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error) {
	if url == UserConnectorURI {
		return nil, ErrNotImplemented
	}
	return d.fakeDelegate.CreateConnector(url, onEvent)
}

func TestConcurrentChurn(t *testing.T) {
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		c.tools = []Tool{newTool("t")}
		return nil
	}
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	go func() {
		for range d.events {
		}
	}()
	stop := running(t, tk)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 20 {
				url := fmt.Sprintf("http://h%d/n%d", i, j)
				if err := tk.AddConnectorNS(fmt.Sprintf("n%d-%d", i, j), url); err != nil {
					t.Error(err)
					return
				}
				if err := tk.RemoveConnector(url); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				_, _ = tk.Lookup(context.Background(), "t")
				_, _ = tk.List(context.Background(), ListRequest{})
			}
		}()
	}
	wg.Wait()
	stop()
	tk.WaitEvents()
	close(d.events)
	if n := len(tk.Connectors()); n != 1 { // the user connector
		t.Fatalf("%d connectors left", n)
	}
}

// FuzzInferNamespace: whatever the URL, the result is a valid,
// unreserved namespace or an ErrBadParameter.
func FuzzInferNamespace(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:1/mcp", "stdio:npx?arg=-y&arg=%40a%2Fb", "stdio:python?arg=-m", "https://mcp.x.com/", "stdio:///a/b.exe", "x:", "h%zz/mcp?token=query-secret"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := InferNamespace(s)
		if err != nil {
			if !errors.Is(err, ErrBadParameter) {
				t.Fatalf("InferNamespace(%q): %v does not wrap ErrBadParameter", s, err)
			}
			// The query of a URL may hold a secret: errors never show it.
			if i := strings.IndexByte(s, '?'); i >= 0 && len(s)-i > 8 && !strings.Contains(s[:i], s[i+1:]) && strings.Contains(err.Error(), s[i+1:]) {
				t.Fatalf("InferNamespace(%q): %q shows the query", s, err)
			}
			return
		}
		if names.CheckNamespace(ns) != nil {
			t.Fatalf("InferNamespace(%q) = %q, not a valid namespace", s, ns)
		}
	})
}
