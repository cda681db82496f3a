package adapt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// schemaTool is a tool with the given input schema.
type schemaTool struct {
	tool.Base
	name string
	in   *jsonschema.Schema
}

func (t *schemaTool) Name() string                                      { return t.name }
func (t *schemaTool) Description() string                               { return "a tool" }
func (t *schemaTool) InputSchema() (*jsonschema.Schema, error)          { return t.in, nil }
func (t *schemaTool) Run(context.Context, json.RawMessage) (any, error) { return "ran", nil }

// withItems is a toolkit that also lists the given tools, as a source that
// lists them unchecked would (an application's own connector).
type withItems struct {
	*toolkit.Toolkit
	extra []toolkit.Tool
}

func (w *withItems) List(ctx context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error) {
	resp, err := w.Toolkit.List(ctx, req)
	if err != nil || (req.Type != "" && req.Type != toolkit.ListTypeTools) {
		return resp, err
	}
	for _, t := range w.extra {
		resp.Items = append(resp.Items, toolkit.Item{Namespace: "src", Type: toolkit.ListTypeTools, Name: t.Name(), Value: t})
		resp.Tools = append(resp.Tools, t)
	}
	return resp, nil
}

// A tool whose schema is hostile is left out of an adapter's tools with an
// error naming it; the others are converted, and a call of the hostile
// tool fails without running it. Definitions made by hand are converted
// within bounds, or refused when too deep to walk.
func TestHostileSchemas(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(&outTool{res: resource.Must("out", "x")}))
	if err != nil {
		t.Fatal(err)
	}
	deep := &jsonschema.Schema{}
	for range 5000 {
		deep = &jsonschema.Schema{Not: deep}
	}
	hostile := []toolkit.Tool{
		&schemaTool{name: "self_ref", in: &jsonschema.Schema{Type: "object", Ref: "#"}},
		&schemaTool{name: "deep", in: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": deep}}},
	}
	c := NewCore(&withItems{Toolkit: tk, extra: hostile})
	conv := NewConverter(c, func(_ *Core, d model.Definition) (string, error) {
		_, err := OpenAIFunction(model.OpenAIChat, d)
		return d.Name, err
	})
	got, err := conv.Current(ctx)
	if len(got) != 1 || got[0] != "out" {
		t.Errorf("converted %q, want [out]", got)
	}
	for _, name := range []string{"self_ref", "deep"} {
		if !errors.Is(err, toolkit.ErrSchema) || !strings.Contains(fmt.Sprint(err), `"src.`+name+`"`) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	rs := c.Dispatch(ctx, []model.ToolCall{ToolCall("1", "self_ref", []byte(`{}`))})
	if len(rs) != 1 || !rs[0].IsError || strings.Contains(rs[0].Content, "ran") {
		t.Errorf("calling self_ref: %+v", rs)
	}

	cyclic := model.Definition{Name: "cyclic", Parameters: json.RawMessage(`{"type":"object","allOf":[{"$ref":"#"}],"properties":{"a":{"$ref":"#"}}}`)}
	tooDeep := model.Definition{Name: "too_deep", Parameters: json.RawMessage(`{"type":"object","properties":{"x":` + strings.Repeat(`{"items":`, 500) + `{}` + strings.Repeat(`}`, 500) + `}}`)}
	for _, f := range []model.Format{model.OpenAIChat, model.OpenAIResponses, model.Anthropic, model.Gemini} {
		if _, err := Encode(f, cyclic); err != nil {
			t.Errorf("%s: cyclic: %v", f, err)
		}
		if _, err := Encode(f, tooDeep); !errors.Is(err, toolkit.ErrSchema) {
			t.Errorf("%s: too deep: %v", f, err)
		}
	}
}
