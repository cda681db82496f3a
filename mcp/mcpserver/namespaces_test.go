package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// WithNamespaces("b") serves b's items alone, under b's own names: an
// MCP Apps host connected there sees b as b, can read b's view and call
// b's app-only tool, and cannot reach a's: a's tools are unknown, a's
// resources not found.
func TestNamespacesServeOneSource(t *testing.T) {
	leakCheck(t)
	ctx := context.Background()
	all, err := connectHTTPVersion(t, twoAppsGateway(t, WithQualifiedNames()), "2025-11-25", nil)
	mustNotErr(t, err)
	one, err := connectHTTPVersion(t, twoAppsGateway(t, WithNamespaces("b")), "2025-11-25", nil)
	mustNotErr(t, err)

	names := func(cs *sdk.ClientSession) []string {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		mustNotErr(t, err)
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	var want []string
	for _, n := range names(all) {
		if rest, ok := strings.CutPrefix(n, "b_"); ok {
			want = append(want, rest)
		}
	}
	slices.Sort(want)
	if got := names(one); len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("tools served for b: %v, want b's own: %v", got, want)
	}

	res, err := one.ListResources(ctx, nil)
	mustNotErr(t, err)
	for _, r := range res.Resources {
		if strings.Contains(r.URI, "#") {
			t.Errorf("resource %s is qualified, or another source's", r.URI)
		}
	}
	rr, err := one.ReadResource(ctx, &sdk.ReadResourceParams{URI: testserver.MetaViewURI})
	mustNotErr(t, err)
	if c := rr.Contents[0]; c.Text != testserver.MetaViewHTML || c.Meta == nil {
		t.Errorf("b's view: %q, _meta %v", c.Text, c.Meta)
	}
	if _, err := one.CallTool(ctx, &sdk.CallToolParams{Name: "app_only", Arguments: map[string]any{}}); err != nil {
		t.Errorf("b's app-only tool, called at b's server: %v", err)
	}
	for _, name := range []string{"a_app_only", "a_app_view"} {
		r, err := one.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil && !r.IsError {
			t.Errorf("%s of another source was called at b's server", name)
		}
	}
	if _, err := one.ReadResource(ctx, &sdk.ReadResourceParams{URI: testserver.MetaViewURI + "#a"}); err == nil {
		t.Error("a's view was read at b's server")
	}
}

// A namespace the toolkit does not have serves nothing; an empty one is
// an error.
func TestNamespacesNoneAndInvalid(t *testing.T) {
	leakCheck(t)
	cs, err := connectHTTPVersion(t, twoAppsGateway(t, WithNamespaces("c")), "2025-11-25", nil)
	mustNotErr(t, err)
	res, err := cs.ListTools(context.Background(), nil)
	mustNotErr(t, err)
	if len(res.Tools) != 0 {
		t.Errorf("%d tools served for a namespace that is not there", len(res.Tools))
	}
	tk, err := toolkit.New()
	mustNotErr(t, err)
	if _, err := New(tk, nil, WithNamespaces("a", "")); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("an empty namespace: %v, want ErrBadParameter", err)
	}
}

// A server of some sources advertises their extensions alone, beside its
// own (WithExtensions): a host connected to another source's endpoint is
// not told of an extension that source's server never declared.
func TestNamespacesAdvertiseTheirExtensions(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{Server: testserver.MetaOptions()})
	upURL := testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	for ns, want := range map[string]string{
		"up":    `{"io.modelcontextprotocol/ui":{"version":"test"},"x.example/builtin":{}}`,
		"other": `{"x.example/builtin":{}}`,
	} {
		g := startGateway(t, upURL, nil, []Option{WithNamespaces(ns), WithExtensions(map[string]any{"x.example/builtin": nil})}, nil)
		cs, err := connectHTTPVersion(t, g.url, "2025-11-25", nil)
		mustNotErr(t, err)
		b, err := json.Marshal(cs.InitializeResult().Capabilities.Extensions)
		mustNotErr(t, err)
		if string(b) != want {
			t.Errorf("a server of %s advertised %s, want %s", ns, b, want)
		}
	}
}
