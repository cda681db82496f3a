package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
)

// wantMeta checks the `_meta` v carries (v is a toolkit.MetaCarrier or
// the map itself) against testserver.MetaJSON[key].
func wantMeta(t testing.TB, key string, v any) {
	t.Helper()
	var m map[string]any
	switch v := v.(type) {
	case toolkit.MetaCarrier:
		m = v.MetaData()
	case sdk.Meta:
		m = v
	case map[string]any:
		m = v
	default:
		t.Errorf("%s: %T carries no _meta", key, v)
		return
	}
	b, err := json.Marshal(m)
	mustNotErr(t, err)
	if got := string(b); got != testserver.MetaJSON[key] {
		t.Errorf("%s: _meta %s, want %s", key, got, testserver.MetaJSON[key])
	}
}

// The `_meta` a server gives its tools, prompts, resources and templates,
// its call results, prompts/get results (and their content blocks) and
// resource contents reaches the connector's items and answers unchanged,
// over stdio and streamable HTTP (stateful and stateless), with both
// protocol generations. The extensions of OptExtensions reach the server
// (capabilities.extensions), and the server's are in the connector's
// state.
func TestMetaThroughConnector(t *testing.T) {
	const clientExt = `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	var ext map[string]any
	mustNotErr(t, json.Unmarshal([]byte(clientExt), &ext))
	const (
		d = StatefulProtocolVersion
		s = StatelessProtocolVersion
	)
	httpURL := func(mode testserver.Mode) func(t *testing.T) string {
		return func(t *testing.T) string {
			srv := newServer(t, testserver.Options{Server: testserver.MetaOptions()})
			srv.AddMetaItems()
			return testserver.ServeHTTP(t, srv.Server, mode).URL
		}
	}
	stdio := func(t *testing.T) string {
		childCheck(t)
		return stdioURL(t, testserver.StdioMeta)
	}
	cases := []struct {
		name  string
		url   func(t *testing.T) string
		proto string
		// blind: the server cannot know the client's capabilities (a
		// stateless 2025-11-25 server sees no initialize).
		blind bool
	}{
		{"stdio", stdio, d, false},
		{"stdio", stdio, s, false},
		{"stateful", httpURL(testserver.Stateful), d, false},
		{"stateless", httpURL(testserver.Stateless), d, true},
		{"stateless", httpURL(testserver.Stateless), s, false},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.proto, func(t *testing.T) {
			leakCheck(t)
			r := start(t, tc.url(t), false, OptProtocolVersion(tc.proto), OptExtensions(ext))
			if got := r.State().ProtocolVersion; got != tc.proto {
				t.Fatalf("negotiated %q, want %q", got, tc.proto)
			}
			if got := r.State().Extensions; got != testserver.MetaServerExtensions {
				t.Errorf("server extensions %s, want %s", got, testserver.MetaServerExtensions)
			}
			ctx := context.Background()
			out, err := call(t, ctx, r.Connector, "client_extensions", `{}`)
			mustNotErr(t, err)
			if got := read(t, out); got != clientExt && !tc.blind {
				t.Errorf("the server saw the extensions %s, want %s", got, clientExt)
			}
			wantMeta(t, "tool app_view", findTool(t, r.Connector, "app_view"))
			wantMeta(t, "tool app_only", findTool(t, r.Connector, "app_only"))
			if m := findTool(t, r.Connector, "echo").(toolkit.MetaCarrier).MetaData(); m != nil {
				t.Errorf("echo: _meta %v, want none", m)
			}

			out, err = call(t, ctx, r.Connector, "app_view", `{}`)
			mustNotErr(t, err)
			wantMeta(t, "result app_view", out)
			if read(t, out) != "shown" {
				t.Errorf("app_view: %q", read(t, out))
			}
			out, err = call(t, ctx, r.Connector, "meta_empty", `{}`)
			mustNotErr(t, err)
			wantMeta(t, "result meta_empty", out)

			prompts, err := r.ListPrompts(ctx)
			mustNotErr(t, err)
			var mp toolkit.Prompt
			for _, p := range prompts {
				if p.Name() == "meta_prompt" {
					mp = p
				}
			}
			if mp == nil {
				t.Fatal("no prompt meta_prompt")
			}
			wantMeta(t, "prompt meta_prompt", mp)
			rendered, err := mp.(prompt.Renderer).Render(ctx, nil)
			mustNotErr(t, err)
			wantMeta(t, "rendered meta_prompt", rendered.Meta)
			if len(rendered.Messages) != 1 {
				t.Fatalf("%d messages", len(rendered.Messages))
			}
			blocks := rendered.Messages[0].Content.(bridge.ContentCarrier).MCPContent()
			wantMeta(t, "block meta_prompt", blocks[0].(*sdk.TextContent).Meta)

			resources, err := r.ListResources(ctx)
			mustNotErr(t, err)
			var view toolkit.Resource
			for _, res := range resources {
				if res.URI() == testserver.MetaViewURI {
					view = res
				}
			}
			if view == nil {
				t.Fatal("no resource " + testserver.MetaViewURI)
			}
			wantMeta(t, "resource view", view)
			rc, err := view.(bridge.TypedReader).ReadTyped(ctx)
			mustNotErr(t, err)
			if string(rc.Data) != testserver.MetaViewHTML || rc.MIMEType != testserver.MetaAppMIME {
				t.Errorf("read %q (%s)", rc.Data, rc.MIMEType)
			}
			wantMeta(t, "contents view", sdk.Meta(rc.Meta))

			templates, err := r.ListResourceTemplates(ctx)
			mustNotErr(t, err)
			var tmpl toolkit.ResourceTemplate
			for _, tt := range templates {
				if tt.URITemplate() == "meta://{id}" {
					tmpl = tt
				}
			}
			if tmpl == nil {
				t.Fatal("no template meta://{id}")
			}
			wantMeta(t, "template meta", tmpl)
			res, err := tmpl.Open("meta://x")
			mustNotErr(t, err)
			rc, err = res.(bridge.TypedReader).ReadTyped(ctx)
			mustNotErr(t, err)
			wantMeta(t, "contents meta", sdk.Meta(rc.Meta))
			mustNotErr(t, r.stop(t))
		})
	}
}

// deepMeta returns a `_meta` nested n levels deep.
func deepMeta(n int) sdk.Meta {
	var v any = "bottom"
	for range n - 1 {
		v = map[string]any{"k": v}
	}
	return sdk.Meta{"k": v}
}

// A server's `_meta` is bounded: a tool whose `_meta` nests too deep or is
// too large is skipped alone (the others are kept), and a call result,
// prompt result or resource contents with such a `_meta` fails with a
// clear error.
func TestMetaHostileBounded(t *testing.T) {
	leakCheck(t)
	huge := sdk.Meta{"k": strings.Repeat("x", maxMetaBytes)}
	srv := newServer(t, testserver.Options{})
	obj := testserver.ObjectSchema()
	ok := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "deep", InputSchema: obj, Meta: deepMeta(maxMetaDepth + 1)}, ok)
	srv.AddTool(&sdk.Tool{Name: "huge", InputSchema: obj, Meta: huge}, ok)
	srv.AddTool(&sdk.Tool{Name: "fine", InputSchema: obj, Meta: deepMeta(maxMetaDepth)}, ok)
	srv.AddTool(&sdk.Tool{Name: "huge_result", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}, Meta: huge}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "deep_result", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Meta: deepMeta(200)}, nil
	})
	srv.AddPrompt(&sdk.Prompt{Name: "deep_prompt"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Meta: deepMeta(100)}, nil
	})
	srv.AddResource(&sdk.Resource{URI: "test://huge-meta", Name: "huge-meta"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "x", Meta: huge}}}, nil
	})
	logs := newLogCapture()
	r := start(t, testserver.ServeHTTP(t, srv.Server, testserver.Stateful).URL, false, OptLogger(slogNew(logs)))
	ctx := context.Background()
	tools, err := r.ListTools(ctx)
	mustNotErr(t, err)
	for _, tl := range tools {
		if tl.Name() == "deep" || tl.Name() == "huge" {
			t.Errorf("tool %q with an unbounded _meta was kept", tl.Name())
		}
	}
	findTool(t, r.Connector, "fine")
	logs.waitFor(t, "skipping remote items", "levels deep", "larger than")

	for _, name := range []string{"huge_result", "deep_result"} {
		if _, err := call(t, ctx, r.Connector, name, `{}`); !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), "_meta") {
			t.Errorf("%s: %v, want a _meta error", name, err)
		}
	}
	prompts, err := r.ListPrompts(ctx)
	mustNotErr(t, err)
	for _, p := range prompts {
		if p.Name() != "deep_prompt" {
			continue
		}
		if _, err := p.(prompt.Renderer).Render(ctx, nil); err == nil || !strings.Contains(err.Error(), "_meta") {
			t.Errorf("deep_prompt: %v, want a _meta error", err)
		}
	}
	resources, err := r.ListResources(ctx)
	mustNotErr(t, err)
	for _, res := range resources {
		if res.URI() == "test://huge-meta" {
			if _, err := res.Read(ctx); err == nil || !strings.Contains(err.Error(), "_meta") {
				t.Errorf("huge-meta: %v, want a _meta error", err)
			}
		}
	}
}

// FuzzCheckMeta: checking any decoded `_meta` ends without a panic, and a
// `_meta` it accepts marshals to at most a few times its bound.
func FuzzCheckMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"ui":{"resourceUri":"ui://x","visibility":["app"]}}`, `{"a":[[[[[[1]]]]]]}`, `{"k":"` + strings.Repeat("x", 100) + `"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		if checkMeta(m) != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 8*maxMetaBytes {
			t.Fatalf("accepted a _meta of %d bytes", len(b))
		}
	})
}
