package genai_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"google.golang.org/genai"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// A toolkit key gives the tool config that makes Gemini call that one
// tool, named as it is offered: the remote tool under its hashed model
// name.
func TestToolConfig(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := gg.New(tk)
	prov := gemini(t, func(r at.Request) (any, error) {
		return candidate(map[string]any{"text": "ok"}), nil
	})
	cfg, err := tools.ToolConfig(ctx, at.RemoteNS+"."+at.RemoteTool)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, prov).Models.GenerateContent(ctx, modelName, []*genai.Content{genai.NewContentFromText("search", genai.RoleUser)},
		&genai.GenerateContentConfig{Tools: fns, ToolConfig: cfg}); err != nil {
		t.Fatal(err)
	}
	body := prov.Requests()[0].Body
	_, remote := declarations(body)
	got := at.Get(body, "toolConfig", "functionCallingConfig")
	if remote == "" || at.Str(got, "mode") != "ANY" || !reflect.DeepEqual(at.List(got, "allowedFunctionNames"), []any{remote}) {
		t.Errorf("toolConfig %s, remote tool %q", at.JSON(at.Get(body, "toolConfig")), remote)
	}

	filtered := gg.New(tk, adapter.WithFilter(model.Filter{Namespaces: []string{toolkit.BuiltinNamespace}}))
	for _, tc := range []struct {
		tools *gg.Tools
		key   string
	}{{tools, "no_such_tool"}, {filtered, at.RemoteNS + "." + at.RemoteTool}} {
		if _, err := tc.tools.ToolConfig(ctx, tc.key); !errors.Is(err, toolkit.ErrNotFound) {
			t.Errorf("ToolConfig(%q): %v", tc.key, err)
		}
	}
}
