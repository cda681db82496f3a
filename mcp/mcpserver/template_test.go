package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/resource"
)

// staticTemplate returns a toolkit template whose resources read as
// "<tag> <vars>".
func testTemplate(t *testing.T, uriTemplate, tag string) toolkit.ResourceTemplate {
	t.Helper()
	tmpl, err := resource.NewTemplate(uriTemplate, tag, "template "+tag, "text/plain", func(_ context.Context, uri string, vars map[string]string) ([]byte, error) {
		return fmt.Appendf(nil, "%s %v", tag, vars), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// templateURIs lists the client's view of the resource templates.
func templateURIs(t *testing.T, ctx context.Context, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range res.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	slices.Sort(uris)
	return uris
}

// readText reads uri and returns its one content's text, URI and MIME type.
func readText(t *testing.T, ctx context.Context, cs *sdk.ClientSession, uri string) (text, gotURI, mime string) {
	t.Helper()
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(rr.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(rr.Contents))
	}
	c := rr.Contents[0]
	return c.Text, c.URI, c.MIMEType
}

// waitTemplates waits, through the client's resource list_changed
// notifications, until the client lists want.
func waitTemplates(t *testing.T, ctx context.Context, cs *sdk.ClientSession, changed <-chan struct{}, want []string) {
	t.Helper()
	for {
		got := templateURIs(t, ctx, cs)
		if slices.Equal(got, want) {
			return
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("templates %q, want %q", got, want)
		}
	}
}

func resourceChanges() (*sdk.ClientOptions, chan struct{}) {
	ch := make(chan struct{}, 64)
	return &sdk.ClientOptions{ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}, ch
}

// TestServerResourceTemplates serves builtin templates: listed, read
// through, added and removed at run time, and a WithResourceTemplate of
// the same URI template winning over the toolkit's.
func TestServerResourceTemplates(t *testing.T) {
	leakCheck(t)
	static := &sdk.ResourceTemplate{URITemplate: "static://{x}", Name: "static"}
	f := newFixture(t, []toolkit.Option{
		toolkit.WithResourceTemplate(testTemplate(t, "items://item/{id}{?fields}", "items"), testTemplate(t, "static://{x}", "hidden")),
	}, WithResourceTemplate(static, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "static"}}}, nil
	}))
	copts, changed := resourceChanges()
	cs := f.connect(t, copts)
	ctx := t.Context()

	if got, want := templateURIs(t, ctx, cs), []string{"items://item/{id}{?fields}", "static://{x}"}; !slices.Equal(got, want) {
		t.Fatalf("templates %q, want %q", got, want)
	}
	res, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range res.ResourceTemplates {
		if rt.URITemplate == "items://item/{id}{?fields}" && (rt.Name != "items" || rt.Description != "template items" || rt.MIMEType != "text/plain") {
			t.Errorf("template %+v", rt)
		}
	}
	for uri, want := range map[string]string{
		"items://item/42":              "items map[id:42]",
		"items://item/a%20b?fields=x":  "items map[fields:x id:a b]",
		"static://1":                   "static",
		"items://item/42?fields=a%2Cb": "items map[fields:a,b id:42]",
	} {
		text, got, mime := readText(t, ctx, cs, uri)
		if text != want || got != uri || want != "static" && mime != "text/plain" {
			t.Errorf("read %s: %q %q %q, want %q", uri, text, got, mime, want)
		}
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "items://item/1/2"}); err == nil {
		t.Error("read of a URI no template matches succeeded")
	}
	if got, ok := f.srv.ExposedName(toolkit.ListTypeTemplates, "items://item/{id}{?fields}#builtin"); !ok || got != "items://item/{id}{?fields}" {
		t.Errorf("ExposedName: %q %v", got, ok)
	}

	// Added and removed at run time: clients hear of it.
	if err := f.tk.AddResourceTemplate(testTemplate(t, "more://{+path}", "more")); err != nil {
		t.Fatal(err)
	}
	waitTemplates(t, ctx, cs, changed, []string{"items://item/{id}{?fields}", "more://{+path}", "static://{x}"})
	if text, _, _ := readText(t, ctx, cs, "more://a/b"); text != "more map[path:a/b]" {
		t.Errorf("read more://a/b: %q", text)
	}
	if err := f.tk.RemoveBuiltin("items://item/{id}{?fields}"); err != nil {
		t.Fatal(err)
	}
	waitTemplates(t, ctx, cs, changed, []string{"more://{+path}", "static://{x}"})
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "items://item/42"}); err == nil {
		t.Error("read through a removed template succeeded")
	}
}

// TestGatewayResourceTemplates re-exports an upstream go-sdk server's
// templates: a client of the gateway lists them and reads URIs through
// them; a template that a builtin already has is exposed as
// "uriTemplate#up"; templates the upstream adds later reach the client.
func TestGatewayResourceTemplates(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	upstream := func(tag string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			id := req.Params.URI[strings.LastIndexByte(req.Params.URI, '/')+1:]
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: fmt.Sprintf(`{"tag":%q,"id":%q}`, tag, id)}}}, nil
		}
	}
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data", MIMEType: "application/json"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: `{"id":"` + id + `"}`}}}, nil
	})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, upstream("upstream"))
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)

	copts, changed := resourceChanges()
	gw, ctx := newGateway(t, m, copts, nil, toolkit.WithResourceTemplate(testTemplate(t, "test://item/{id}", "builtin")))

	waitTemplates(t, ctx, gw, changed, []string{"test://item/{id}", "test://item/{id}#up", "test://template/{id}/data"})
	for _, c := range []struct{ uri, want, mime string }{
		{"test://template/123/data", `{"id":"123"}`, "application/json"},
		{"test://item/7", "builtin map[id:7]", "text/plain"},
		{"test://item/7#up", `{"tag":"upstream","id":"7"}`, "application/json"},
	} {
		text, got, mime := readText(t, ctx, gw, c.uri)
		if text != c.want || got != c.uri || mime != c.mime {
			t.Errorf("read %s: %q %q %q, want %q %q", c.uri, text, got, mime, c.want, c.mime)
		}
	}
	if _, err := gw.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://template/1/2/data"}); err == nil {
		t.Error("read of a URI no template matches succeeded")
	}

	// The upstream adds and removes templates: the gateway follows.
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://later/{id}", Name: "later"}, upstream("later"))
	s.RemoveResourceTemplates("test://item/{id}")
	waitTemplates(t, ctx, gw, changed, []string{"test://item/{id}", "test://later/{id}", "test://template/{id}/data"})
	if text, _, _ := readText(t, ctx, gw, "test://later/5"); text != `{"tag":"later","id":"5"}` {
		t.Errorf("read test://later/5: %q", text)
	}
	if _, err := gw.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://item/7#up"}); err == nil {
		t.Error("read through a template the upstream removed succeeded")
	}
}
