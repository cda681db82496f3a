package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

func TestToolFilterKeeps(t *testing.T) {
	for _, tc := range []struct {
		filter ToolFilter
		keep   []string
		drop   []string
	}{
		{ToolFilter{}, []string{"a", "get_user"}, nil},
		{ToolFilter{Allow: []string{"get_*", "list"}}, []string{"get_user", "list"}, []string{"list_all", "delete"}},
		{ToolFilter{Deny: []string{"delete_*", "?"}}, []string{"get", "ab"}, []string{"delete_user", "x"}},
		{ToolFilter{Allow: []string{"get_*"}, Deny: []string{"get_secret*"}}, []string{"get_user"}, []string{"get_secret_key", "put"}},
		{ToolFilter{Allow: []string{"[a-c]*"}}, []string{"alpha", "create"}, []string{"delta"}},
	} {
		for _, n := range tc.keep {
			if !tc.filter.keeps(n) {
				t.Errorf("%+v drops %q", tc.filter, n)
			}
		}
		for _, n := range tc.drop {
			if tc.filter.keeps(n) {
				t.Errorf("%+v keeps %q", tc.filter, n)
			}
		}
	}
}

// fakeConnector serves a fixed list of tools.
type fakeConnector struct{ tools []toolkit.Tool }

func (f *fakeConnector) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakeConnector) ListTools(context.Context) ([]toolkit.Tool, error) {
	return f.tools, nil
}
func (f *fakeConnector) ListPrompts(context.Context) ([]toolkit.Prompt, error)     { return nil, nil }
func (f *fakeConnector) ListResources(context.Context) ([]toolkit.Resource, error) { return nil, nil }

func TestFiltered(t *testing.T) {
	slow := tool.Must("slow", "Waits for its context.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	quick := tool.Must("quick", "Answers at once.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	secret := tool.Must("secret", "Hidden.", func(context.Context, struct{}) (string, error) { return "", nil })
	f := &filtered{
		Connector: &fakeConnector{tools: []toolkit.Tool{slow, quick, secret}},
		filter:    ToolFilter{Deny: []string{"sec*"}},
		timeout:   20 * time.Millisecond,
	}
	ctx := context.Background()
	tools, err := f.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
	}
	if !slices.Equal(names, []string{"slow", "quick"}) {
		t.Fatalf("tools = %v", names)
	}

	// The time limit cuts a call that would never end.
	if _, err := tools[0].Run(ctx, json.RawMessage(`{}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow tool: err = %v, want a deadline", err)
	}
	if out, err := tools[1].Run(ctx, json.RawMessage(`{}`)); err != nil || out != "ok" {
		t.Errorf("quick tool = %v, %v", out, err)
	}

	// Listing again gives equal values: the toolkit sees no change.
	again, _ := f.ListTools(ctx)
	for i := range tools {
		if tools[i] != again[i] {
			t.Errorf("tool %d differs between two listings", i)
		}
	}
}

// TestFilteredInToolkit checks the wrapper from the toolkit's side: the
// denied tool is not served.
func TestFilteredInToolkit(t *testing.T) {
	hidden := tool.Must("hidden", "Hidden.", func(context.Context, struct{}) (string, error) { return "", nil })
	shown := tool.Must("shown", "Shown.", func(context.Context, struct{}) (string, error) { return "yes", nil })
	d := &delegate{
		logger: testLogger(t),
		wrap: func(_ string, c toolkit.Connector) toolkit.Connector {
			return &filtered{Connector: c, filter: ToolFilter{Deny: []string{"hidden"}}}
		},
	}
	tk, err := toolkit.New(toolkit.WithDelegate(connectorDelegate{d, &fakeConnector{tools: []toolkit.Tool{hidden, shown}}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddConnectorNS("up", "http://upstream.invalid/mcp"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tk.Lookup(ctx, "up.hidden"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("up.hidden: err = %v, want not found", err)
	}
	if _, err := tk.Lookup(ctx, "up.shown"); err != nil {
		t.Errorf("up.shown: %v", err)
	}
}

// connectorDelegate is d with CreateConnector returning a fixed connector
// through d's wrap hook.
type connectorDelegate struct {
	*delegate
	c toolkit.Connector
}

func (cd connectorDelegate) CreateConnector(url string, _ func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	return cd.wrap(url, cd.c), nil
}
