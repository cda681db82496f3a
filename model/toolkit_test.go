package model

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// remote is a connector whose tool list the test sets.
type remote struct {
	mu      sync.Mutex
	tools   []toolkit.Tool
	onEvent func(toolkit.ConnectorEvent)
	started chan struct{}
}

func (r *remote) Run(ctx context.Context) error {
	close(r.started)
	<-ctx.Done()
	return nil
}

func (r *remote) ListTools(context.Context) ([]toolkit.Tool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]toolkit.Tool(nil), r.tools...), nil
}
func (r *remote) ListPrompts(context.Context) ([]toolkit.Prompt, error)     { return nil, nil }
func (r *remote) ListResources(context.Context) ([]toolkit.Resource, error) { return nil, nil }

// delegate creates remotes, runs prompts and forwards events.
type delegate struct {
	remote *remote
	events chan toolkit.ConnectorEvent
}

func (d *delegate) OnEvent(ev toolkit.ConnectorEvent) { d.events <- ev }

func (d *delegate) Call(_ context.Context, p toolkit.Prompt, res ...toolkit.Resource) (toolkit.Resource, error) {
	in, _ := res[0].Read(context.Background())
	return resource.Text("reply", p.Name()+" got "+string(in))
}

func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	d.remote.onEvent = onEvent
	return d.remote, nil
}

// setTools replaces the remote's tools and waits until the toolkit shows
// them.
func (d *delegate) setTools(t *testing.T, ready bool, tools ...toolkit.Tool) {
	t.Helper()
	d.remote.mu.Lock()
	d.remote.tools = tools
	d.remote.mu.Unlock()
	if ready {
		d.remote.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusReady}))
	} else {
		d.remote.onEvent(toolkit.ToolListChangeEvent())
	}
	for ev := range d.events {
		if ev.Kind == toolkit.ConnectorEventToolListChanged {
			return
		}
	}
}

func text(name, out string) *testTool {
	return &testTool{name: name, desc: "Returns " + out + ".", run: func(context.Context, json.RawMessage) (any, error) { return out, nil }}
}

// TestToolkit runs the package against a real toolkit with a builtin set
// and a remote connector whose names are hostile.
func TestToolkit(t *testing.T) {
	d := &delegate{remote: &remote{started: make(chan struct{})}, events: make(chan toolkit.ConnectorEvent, 64)}
	type weatherIn struct {
		City string `json:"city"`
	}
	weather := tool.Must("get_weather", "Current weather for a city.",
		func(_ context.Context, in weatherIn) (map[string]string, error) {
			return map[string]string{"city": in.City, "sky": "clear"}, nil
		}, tool.WithReadOnly(true))
	stall := make(chan struct{})
	stalled := make(chan struct{})
	tk, err := toolkit.New(toolkit.WithDelegate(d),
		toolkit.WithTool(weather, text("search", "builtin results"),
			&testTool{name: "explode", run: func(context.Context, json.RawMessage) (any, error) { panic("kaboom") }},
			&testTool{name: "stall", run: func(context.Context, json.RawMessage) (any, error) {
				defer close(stalled)
				<-stall
				return "late", nil
			}}),
		toolkit.WithPrompt(&testPrompt{name: "summarize", title: "Summarize a text"}))
	if err != nil {
		t.Fatal(err)
	}
	runWithRemote(t, tk, d)
	d.setTools(t, true, text("search", "remote results"), text("get.weather", "dotted"), text("Get_Weather", "cased"))

	c := NewCatalog(tk)
	defs, err := c.Definitions(context.Background(), Filter{Prompts: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range defs {
		got[d.Item.Key()] = d.Name
	}
	want := map[string]string{
		"builtin.get_weather": "get_weather",
		"builtin.search":      "search",
		"builtin.explode":     "explode",
		"builtin.stall":       "stall",
		"builtin.summarize":   "summarize",
		"srv.search":          "srv__search",
		"srv.get.weather":     "srv__get_weather_" + hash6("tool:srv.get.weather"),
		"srv.Get_Weather":     "srv__Get_Weather",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s named %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("names %v", got)
	}
	if tools, err := Encode(Gemini, defs); err != nil || !strings.Contains(string(tools), `"city":{"type":"STRING"}`) {
		t.Errorf("gemini: %s, %v", tools, err)
	}
	if hits, _ := c.Search(context.Background(), "weather in Paris", 5, Filter{ReadOnly: true}); len(hits) != 1 || hits[0].Name != "get_weather" {
		t.Errorf("read-only search: %+v", hits)
	}

	dsp := NewDispatcher(tk, c, WithTimeout(50*time.Millisecond), WithRepair(true))
	results := dsp.Dispatch(context.Background(),
		ToolCall{ID: "1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		ToolCall{ID: "2", Name: "srv__search", Arguments: `{}`},
		ToolCall{ID: "3", Name: "search", Arguments: ``},
		ToolCall{ID: "4", Name: got["srv.get.weather"], Arguments: `{}`},
		ToolCall{ID: "5", Name: "explode", Arguments: `{}`},
		ToolCall{ID: "6", Name: "stall", Arguments: `{}`},
		ToolCall{ID: "7", Name: "get_weather", Arguments: `{"city": 42}`},
		ToolCall{ID: "8", Name: "summarize", Arguments: `{'text': 'long'}`},
		ToolCall{ID: "9", Name: "srv.search", Arguments: `{}`},
	)
	checks := []struct {
		content string
		isError bool
		errIs   error
	}{
		{`{"city":"Paris","sky":"clear"}`, false, nil},
		{"remote results", false, nil},
		{"builtin results", false, nil},
		{"dotted", false, nil},
		{"kaboom", true, toolkit.ErrToolFailed},
		{"timed out", true, toolkit.ErrUnavailable},
		{"city", true, toolkit.ErrSchema},
		{`summarize got {"text":"long"}`, false, nil},
		{`Did you mean "srv__search"`, true, toolkit.ErrNotFound},
	}
	for i, want := range checks {
		r := results[i]
		if !strings.Contains(r.Content, want.content) || r.IsError != want.isError || (want.errIs != nil && !errors.Is(r.Err, want.errIs)) {
			t.Errorf("call %s: %+v", r.ID, r)
		}
	}
	if !results[0].JSON || !results[7].Repaired {
		t.Errorf("flags: %+v / %+v", results[0], results[7])
	}
	close(stall)
	<-stalled

	// The remote drops "search" and adds "lookup": names stay put, the old
	// one no longer resolves and is not handed to anyone else.
	d.setTools(t, false, text("get.weather", "dotted"), text("Get_Weather", "cased"), text("lookup", "found"))
	tk.WaitEvents() // the catalog hears of the change through its own subscription
	defs, _ = c.Definitions(context.Background(), Filter{Namespaces: []string{"srv"}})
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, " ") != "srv__Get_Weather "+want["srv.get.weather"]+" lookup" {
		t.Errorf("after the change: %v", names)
	}
	if r := dsp.Call(context.Background(), ToolCall{Name: "srv__search", Arguments: "{}"}); !r.IsError || !errors.Is(r.Err, toolkit.ErrNotFound) {
		t.Errorf("removed tool: %+v", r)
	}
	if r := dsp.Call(context.Background(), ToolCall{Name: "lookup", Arguments: "{}"}); r.Content != "found" {
		t.Errorf("new tool: %+v", r)
	}
}
