package mcpserver

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/resource"
)

// wantMeta checks a `_meta` against testserver.MetaJSON[key], leaving out
// the server's own serverInfo (2026-07-28 adds it to every result).
func wantMeta(t testing.TB, key string, m map[string]any) {
	t.Helper()
	m = maps.Clone(m)
	delete(m, sdk.MetaKeyServerInfo)
	b, err := json.Marshal(m)
	mustNotErr(t, err)
	if string(b) != testserver.MetaJSON[key] {
		t.Errorf("%s: _meta %s, want %s", key, b, testserver.MetaJSON[key])
	}
}

// A gateway serves the `_meta` its upstream gave tools, prompts,
// resources and templates, and passes on the `_meta` of call results,
// prompts/get results (and their blocks) and resource contents, to
// clients of either protocol generation, over stateful and stateless
// streamable HTTP.
func TestMetaThroughGateway(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{})
	up.AddMetaItems()
	upURL := testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	stateful := startGateway(t, upURL, nil, nil, nil)
	stateless := startGateway(t, upURL, nil, nil, []HTTPOption{WithStateless()})
	for _, tc := range []struct {
		name, url, version string
	}{
		{"stateful", stateful.url, "2025-11-25"},
		{"stateful", stateful.url, "2026-07-28"},
		{"stateless", stateless.url, "2026-07-28"},
	} {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			cs, err := connectHTTPVersion(t, tc.url, tc.version, nil)
			mustNotErr(t, err)
			ctx := context.Background()
			tools, err := cs.ListTools(ctx, nil)
			mustNotErr(t, err)
			byName := map[string]*sdk.Tool{}
			for _, tl := range tools.Tools {
				byName[tl.Name] = tl
			}
			for _, name := range []string{"app_view", "app_only"} {
				if byName[name] == nil {
					t.Fatalf("no tool %q", name)
				}
				wantMeta(t, "tool "+name, byName[name].Meta)
			}
			if m := byName["echo"].Meta; m != nil {
				t.Errorf("echo: _meta %v, want none", m)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "app_view", Arguments: map[string]any{}})
			mustNotErr(t, err)
			wantMeta(t, "result app_view", res.Meta)
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "meta_empty", Arguments: map[string]any{}})
			mustNotErr(t, err)
			wantMeta(t, "result meta_empty", res.Meta)

			prompts, err := cs.ListPrompts(ctx, nil)
			mustNotErr(t, err)
			for _, p := range prompts.Prompts {
				if p.Name == "meta_prompt" {
					wantMeta(t, "prompt meta_prompt", p.Meta)
				}
			}
			pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "meta_prompt"})
			mustNotErr(t, err)
			wantMeta(t, "rendered meta_prompt", pr.Meta)
			if len(pr.Messages) != 1 {
				t.Fatalf("%d messages", len(pr.Messages))
			}
			wantMeta(t, "block meta_prompt", pr.Messages[0].Content.(*sdk.TextContent).Meta)

			resources, err := cs.ListResources(ctx, nil)
			mustNotErr(t, err)
			found := false
			for _, r := range resources.Resources {
				if r.URI == testserver.MetaViewURI {
					found = true
					wantMeta(t, "resource view", r.Meta)
				}
			}
			if !found {
				t.Error("no resource " + testserver.MetaViewURI)
			}
			rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: testserver.MetaViewURI})
			mustNotErr(t, err)
			if c := rr.Contents[0]; c.Text != testserver.MetaViewHTML || c.MIMEType != testserver.MetaAppMIME {
				t.Errorf("read %q (%s)", c.Text, c.MIMEType)
			}
			wantMeta(t, "contents view", rr.Contents[0].Meta)

			templates, err := cs.ListResourceTemplates(ctx, nil)
			mustNotErr(t, err)
			for _, tt := range templates.ResourceTemplates {
				if tt.URITemplate == "meta://{id}" {
					wantMeta(t, "template meta", tt.Meta)
				}
			}
			rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "meta://x"})
			mustNotErr(t, err)
			wantMeta(t, "contents meta", rr.Contents[0].Meta)
		})
	}
}

// withMetaTool is a builtin tool with a `_meta`, whose output carries one.
type withMetaTool struct {
	testTool
	meta map[string]any
}

func (t *withMetaTool) MetaData() map[string]any { return t.meta }

// metaResource is a builtin resource with a `_meta`.
type metaResource struct {
	staticResource
	meta map[string]any
}

func (r *metaResource) MetaData() map[string]any { return r.meta }

// A builtin sets its `_meta` by implementing resource.MetaCarrier: the
// server face serves it on its definition, on its contents when read, and
// on a call result whose output carries one. A `_meta` that does not
// marshal refuses that item alone.
func TestMetaOfBuiltins(t *testing.T) {
	leakCheck(t)
	out := &metaResource{staticResource{uri: "test://out", name: "out", typ: "text/plain", data: []byte("done")}, map[string]any{"k": "out"}}
	tl := &withMetaTool{*funcTool("with_meta", func(context.Context, json.RawMessage) (any, error) { return out, nil }), map[string]any{"k": "tool"}}
	bad := &withMetaTool{*funcTool("bad_meta", nil), map[string]any{"k": make(chan int)}}
	res := &metaResource{staticResource{uri: "test://r", name: "r", typ: "text/plain", data: []byte("r")}, map[string]any{"k": "res"}}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(tl), toolkit.WithTool(bad), toolkit.WithResource(res)})
	var _ resource.MetaCarrier = tl
	cs := f.connect(t, nil)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	mustNotErr(t, err)
	var names []string
	for _, x := range tools.Tools {
		names = append(names, x.Name)
		if x.Name == "with_meta" && x.Meta["k"] != "tool" {
			t.Errorf("with_meta: _meta %v", x.Meta)
		}
	}
	if len(names) != 1 || names[0] != "with_meta" {
		t.Errorf("tools %v, want [with_meta] (bad_meta refused)", names)
	}
	cr, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "with_meta", Arguments: map[string]any{}})
	mustNotErr(t, err)
	if cr.Meta["k"] != "out" {
		t.Errorf("result _meta %v", cr.Meta)
	}
	rl, err := cs.ListResources(ctx, nil)
	mustNotErr(t, err)
	if len(rl.Resources) != 1 || rl.Resources[0].Meta["k"] != "res" {
		t.Errorf("resources %+v", rl.Resources)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://r"})
	mustNotErr(t, err)
	if rr.Contents[0].Meta["k"] != "res" {
		t.Errorf("contents _meta %v", rr.Contents[0].Meta)
	}
}
