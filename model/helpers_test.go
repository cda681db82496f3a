package model

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// testTool is a tool whose every part a test can set.
type testTool struct {
	tool.Base
	name, desc string
	schema     *jsonschema.Schema
	meta       tool.Meta
	run        func(ctx context.Context, in json.RawMessage) (any, error)
}

func (t *testTool) Name() string                             { return t.name }
func (t *testTool) Description() string                      { return t.desc }
func (t *testTool) InputSchema() (*jsonschema.Schema, error) { return t.schema, nil }
func (t *testTool) Meta() tool.Meta                          { return t.meta }
func (t *testTool) Run(ctx context.Context, in json.RawMessage) (any, error) {
	if t.run == nil {
		return string(in), nil
	}
	return t.run(ctx, in)
}

// testPrompt is a prompt with a name, title, description and schema.
type testPrompt struct {
	name, title, desc string
	schema            *jsonschema.Schema
}

func (p *testPrompt) Name() string                             { return p.name }
func (p *testPrompt) Title() string                            { return p.title }
func (p *testPrompt) Description() string                      { return p.desc }
func (p *testPrompt) InputSchema() (*jsonschema.Schema, error) { return p.schema, nil }

func toolItem(ns, name string) toolkit.Item {
	return toolkit.Item{Namespace: ns, Type: toolkit.ListTypeTools, Name: name, Value: &testTool{name: name, desc: "tool " + name}}
}

func promptItem(ns, name string) toolkit.Item {
	return toolkit.Item{Namespace: ns, Type: toolkit.ListTypePrompts, Name: name, Value: &testPrompt{name: name, title: "prompt " + name}}
}

// directCaller runs tools in place, turning their output into resources as
// the toolkit does, without recovering panics: the dispatcher must.
type directCaller struct{}

func (directCaller) Call(ctx context.Context, item any, res ...toolkit.Resource) (toolkit.Resource, error) {
	t, ok := item.(toolkit.Tool)
	if !ok {
		return nil, fmt.Errorf("%w: not a tool", toolkit.ErrBadParameter)
	}
	var in json.RawMessage
	if len(res) > 0 {
		b, err := res[0].Read(ctx)
		if err != nil {
			return nil, err
		}
		in = b
	}
	out, err := t.Run(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: %w", toolkit.ErrToolFailed, t.Name(), err)
	}
	switch v := out.(type) {
	case nil:
		return nil, nil
	case toolkit.Resource:
		return v, nil
	case string:
		return resource.Text("output", v)
	case json.RawMessage:
		return resource.JSON("output", v)
	case []byte:
		return resource.Data("output", v)
	default:
		return resource.JSON("output", v)
	}
}

// staticLister serves a fixed list of items, counting List calls.
type staticLister struct {
	items []toolkit.Item
	calls int
}

func (l *staticLister) List(_ context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error) {
	l.calls++
	resp := &toolkit.ListResponse{Items: make([]toolkit.Item, 0, len(l.items))}
	for _, it := range l.items {
		if req.Type == "" || it.Type == req.Type {
			resp.Items = append(resp.Items, it)
		}
	}
	return resp, nil
}

func mustSchema(s string) *jsonschema.Schema {
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		panic(err)
	}
	return &sc
}

// runWithRemote runs tk until the test ends and adds the delegate's fake
// remote server as namespace "srv", returning once it has started.
func runWithRemote(t *testing.T, tk *toolkit.Toolkit, d *delegate) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- tk.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	})
	if err := tk.AddConnectorNS("srv", "test://srv"); err != nil {
		t.Fatal(err)
	}
	<-d.remote.started
}
