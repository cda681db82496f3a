//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// uiExtension is the MCP Apps extension id and the settings a host that
// renders HTML views declares.
const uiExtension = "io.modelcontextprotocol/ui"

var uiSettings = map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}}

// appsClient connects an MCP client that declares the MCP Apps extension
// over transport; the session is closed when the test ends.
func appsClient(t *testing.T, transport sdk.Transport) *sdk.ClientSession {
	t.Helper()
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension(uiExtension, uiSettings)
	c := sdk.NewClient(&sdk.Implementation{Name: "apps-host", Version: "1"}, &sdk.ClientOptions{Capabilities: caps})
	// The Apps servers speak 2025-11-25; the host speaks it to the gateway
	// too, so that both answers are of the same protocol (2026-07-28 adds
	// resultType and per-hop `_meta` keys).
	cs, err := c.Connect(context.Background(), transport, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// appsCalls are the tool calls compared per server, with their arguments:
// tools that need no network (server-map's geocode asks OpenStreetMap).
var appsCalls = map[peers.App]map[string]map[string]any{
	peers.AppBasicVanillaJS:  {"get-time": {}},
	peers.AppBasicReact:      {"get-time": {}},
	peers.AppMap:             {"show-map": {"west": 2.2, "south": 48.8, "east": 2.4, "north": 48.9, "label": "Paris"}},
	peers.AppPDF:             {"list_pdfs": {}},
	peers.AppBudgetAllocator: {"get-budget-data": {}},
}

// appsSeen is what an MCP Apps host sees of a server: its tools, resources
// and the contents of each resource by URI, and the results of appsCalls
// by tool name, all as JSON (the values that change at every call made
// constant, see steadyResult).
type appsSeen struct {
	tools     map[string]*sdk.Tool
	resources map[string]*sdk.Resource
	contents  map[string][]*sdk.ResourceContents
	html      map[string]string
	results   map[string]string
	// extensions are those the server advertises.
	extensions map[string]any
}

// look lists what cs offers and reads every resource; it calls the tools of
// calls, named as names says.
func look(t *testing.T, cs *sdk.ClientSession, calls map[string]map[string]any, names func(string) string) appsSeen {
	t.Helper()
	ctx := context.Background()
	s := appsSeen{tools: map[string]*sdk.Tool{}, resources: map[string]*sdk.Resource{}, contents: map[string][]*sdk.ResourceContents{}, html: map[string]string{}, results: map[string]string{},
		extensions: cs.InitializeResult().Capabilities.Extensions}
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		s.tools[tl.Name] = tl
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		s.resources[r.URI] = r
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatalf("reading %s: %v", r.URI, err)
		}
		s.contents[r.URI] = rr.Contents
		if len(rr.Contents) > 0 {
			s.html[r.URI] = rr.Contents[0].Text
		}
	}
	for name, args := range calls {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: names(name), Arguments: args})
		if err != nil {
			t.Fatalf("calling %s: %v", names(name), err)
		}
		s.results[name] = mustJSON(t, steadyResult(t, res))
	}
	return s
}

// steadyResult returns res with what changes at every call made constant:
// get-time's time (its text and structuredContent) and show-map's view id.
func steadyResult(t *testing.T, res *sdk.CallToolResult) *sdk.CallToolResult {
	t.Helper()
	c := *res
	if m, ok := c.StructuredContent.(map[string]any); ok && m["time"] != nil {
		c.StructuredContent = map[string]any{"time": "TIME"}
	}
	if len(c.Content) == 1 {
		if tc, ok := c.Content[0].(*sdk.TextContent); ok && strings.HasPrefix(tc.Text, "20") && strings.HasSuffix(tc.Text, "Z") {
			c.Content = []sdk.Content{&sdk.TextContent{Text: "TIME"}}
		}
	}
	if c.Meta != nil && c.Meta["viewUUID"] != nil {
		c.Meta = maps.Clone(c.Meta)
		c.Meta["viewUUID"] = "UUID"
	}
	return &c
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// appsUpstream is one Apps server behind the gateway: its namespace and
// its package.
type appsUpstream struct {
	ns  string
	app peers.App
}

// exposedNames gives the names the gateway exposes for the tools and
// resource URIs of upstream i of ups, as the rules of package mcpserver
// say: the first server with a bare name keeps it unless qualified, the
// others get "ns_name" and "uri#ns".
type exposedNames struct {
	qualified bool
	firstTool map[string]string // tool name -> namespace that keeps it
	firstURI  map[string]string // resource URI -> namespace that keeps it
}

func newExposedNames(qualified bool, ups []appsUpstream, seen []appsSeen) exposedNames {
	e := exposedNames{qualified: qualified, firstTool: map[string]string{}, firstURI: map[string]string{}}
	for i, up := range ups {
		for name := range seen[i].tools {
			if _, ok := e.firstTool[name]; !ok {
				e.firstTool[name] = up.ns
			}
		}
		for uri := range seen[i].resources {
			if _, ok := e.firstURI[uri]; !ok {
				e.firstURI[uri] = up.ns
			}
		}
	}
	return e
}

func (e exposedNames) tool(ns, name string) string {
	if !e.qualified && e.firstTool[name] == ns {
		return name
	}
	return ns + "_" + name
}

func (e exposedNames) uri(ns, uri string) string {
	if !e.qualified && e.firstURI[uri] == ns {
		return uri
	}
	return uri + "#" + ns
}

// throughGateway returns what a host should see through the gateway of the
// tool tl of namespace ns: the same tool under its exposed name, its view
// named by the URI the gateway serves for it.
func (e exposedNames) throughGateway(ns string, tl *sdk.Tool) *sdk.Tool {
	c := *tl
	c.Name = e.tool(ns, tl.Name)
	if ui, uri, ok := viewURI(tl.Meta); ok {
		c.Meta = maps.Clone(tl.Meta)
		ui = maps.Clone(ui)
		ui["resourceUri"] = e.uri(ns, uri)
		c.Meta["ui"] = ui
		if _, ok := c.Meta["ui/resourceUri"]; ok {
			c.Meta["ui/resourceUri"] = e.uri(ns, uri)
		}
	}
	return &c
}

// viewURI returns a tool's `_meta.ui` and the URI of its view.
func viewURI(m map[string]any) (map[string]any, string, bool) {
	ui, _ := m["ui"].(map[string]any)
	uri, ok := ui["resourceUri"].(string)
	return ui, uri, ok
}

// TestGatewayAppsPeers puts the MCP Apps example servers of the ext-apps
// project behind the real gateway and checks that a host declaring the
// MCP Apps extension sees through the gateway everything it sees from each
// server directly, exposed names aside: every tool with its `_meta` (the
// view URI naming the one the gateway serves for the tool's own server),
// the ui:// resources and their contents with the contents' `_meta` (CSP,
// permissions), and tool results with their `_meta` and
// structuredContent. It does so with default names, with qualified names,
// and with two servers whose tool and view URI are the same
// (server-basic-vanillajs and server-basic-react: each tool must open its
// own server's HTML), under both naming schemes.
func TestGatewayAppsPeers(t *testing.T) {
	pdfDir := t.TempDir()
	args := func(app peers.App) []string {
		if app == peers.AppPDF {
			return []string{pdfDir}
		}
		return nil
	}
	distinct := []appsUpstream{{"basic", peers.AppBasicVanillaJS}, {"map", peers.AppMap}, {"pdf", peers.AppPDF}, {"budget", peers.AppBudgetAllocator}}
	// server-pdf replaces the folders of its command line with its
	// client's roots when the client offers roots. A shared upstream
	// session offers them (it forwards roots/list to the caller of a call,
	// and answers an empty list outside calls); a per-client session
	// offers what its client does, here nothing, as the direct client.
	sessions := func(app peers.App) string {
		if app == peers.AppPDF {
			return "per_client"
		}
		return "shared"
	}
	colliding := []appsUpstream{{"vanilla", peers.AppBasicVanillaJS}, {"react", peers.AppBasicReact}}

	// What each server shows a host directly, once per package.
	direct := map[peers.App]appsSeen{}
	for _, up := range append(distinct, colliding[1]) {
		node, argv := peers.AppStdio(t, up.app, args(up.app)...)
		cs := appsClient(t, &sdk.CommandTransport{Command: exec.Command(node, argv...)})
		direct[up.app] = look(t, cs, appsCalls[up.app], func(n string) string { return n })
		if err := cs.Close(); err != nil {
			t.Errorf("closing %s: %v", up.app, err)
		}
	}

	for _, tc := range []struct {
		name      string
		qualified bool
		ups       []appsUpstream
	}{
		{"default names", false, distinct},
		{"qualified names", true, distinct},
		{"colliding default names", false, colliding},
		{"colliding qualified names", true, colliding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg strings.Builder
			fmt.Fprintf(&cfg, "listen: 127.0.0.1:0\nqualified_names: %t\nservers:\n", tc.qualified)
			seen := make([]appsSeen, len(tc.ups))
			for i, up := range tc.ups {
				node, argv := peers.AppStdio(t, up.app, args(up.app)...)
				command, _ := json.Marshal(append([]string{node}, argv...))
				fmt.Fprintf(&cfg, "  - name: %s\n    command: %s\n    upstream_sessions: %s\n    timeouts: {connect: 60s}\n    extensions:\n      %s: {mimeTypes: [text/html;profile=mcp-app]}\n", up.ns, command, sessions(up.app), uiExtension)
				seen[i] = direct[up.app]
			}
			g := startGateway(t, writeConfig(t, t.TempDir(), cfg.String()))
			for _, up := range tc.ups {
				g.waitLog(t, 0, upstreamReady(up.ns))
			}
			names := newExposedNames(tc.qualified, tc.ups, seen)
			cs := appsClient(t, &sdk.StreamableClientTransport{Endpoint: g.mcpURL})
			for _, up := range tc.ups {
				for id, settings := range direct[up.app].extensions {
					if got := cs.InitializeResult().Capabilities.Extensions[id]; mustJSON(t, got) != mustJSON(t, settings) {
						t.Errorf("%s: the gateway advertises the extension %s as %v, the server as %v", up.ns, id, got, settings)
					}
				}
			}
			var got appsSeen
			{
				calls := map[string]map[string]any{}
				for _, up := range tc.ups {
					for name, a := range appsCalls[up.app] {
						calls[up.ns+"\x00"+name] = a
					}
				}
				got = look(t, cs, calls, func(key string) string {
					ns, name, _ := strings.Cut(key, "\x00")
					return names.tool(ns, name)
				})
			}

			wantTools := map[string]bool{}
			wantURIs := map[string]bool{}
			for i, up := range tc.ups {
				d := seen[i]
				for _, tl := range d.tools {
					want := names.throughGateway(up.ns, tl)
					wantTools[want.Name] = true
					gt := got.tools[want.Name]
					if gt == nil {
						t.Errorf("%s: tool %s not listed through the gateway", up.ns, want.Name)
						continue
					}
					if w, g := mustJSON(t, want), mustJSON(t, gt); w != g {
						t.Errorf("%s: tool %s through the gateway\n got %s\nwant %s", up.ns, want.Name, g, w)
					}
					// The views the tool names (ui.resourceUri, and the
					// legacy ui/resourceUri) are its own server's.
					_, own, _ := viewURI(tl.Meta)
					_, uri, _ := viewURI(gt.Meta)
					legacy, _ := gt.Meta["ui/resourceUri"].(string)
					for _, uri := range []string{uri, legacy} {
						if uri != "" && got.html[uri] != d.html[own] {
							t.Errorf("%s: tool %s names the view %s, which is not its own server's %s (%d bytes, want %d)", up.ns, gt.Name, uri, own, len(got.html[uri]), len(d.html[own]))
						}
					}
				}
				for uri, r := range d.resources {
					exposed := names.uri(up.ns, uri)
					wantURIs[exposed] = true
					gr := got.resources[exposed]
					if gr == nil {
						t.Errorf("%s: resource %s not listed through the gateway as %s", up.ns, uri, exposed)
						continue
					}
					want := *r
					want.URI = exposed
					if w, g := mustJSON(t, &want), mustJSON(t, gr); w != g {
						t.Errorf("%s: resource %s through the gateway\n got %s\nwant %s", up.ns, exposed, g, w)
					}
					// Each content names the URI it was read by.
					var wantContents []*sdk.ResourceContents
					for _, c := range d.contents[uri] {
						c := *c
						if c.URI == uri {
							c.URI = exposed
						}
						wantContents = append(wantContents, &c)
					}
					if w, g := mustJSON(t, wantContents), mustJSON(t, got.contents[exposed]); w != g {
						t.Errorf("%s: contents of %s through the gateway\n got %.600s\nwant %.600s", up.ns, exposed, g, w)
					}
				}
				for name := range appsCalls[up.app] {
					if w, g := d.results[name], got.results[up.ns+"\x00"+name]; w != g {
						t.Errorf("%s: result of %s through the gateway\n got %s\nwant %s", up.ns, names.tool(up.ns, name), g, w)
					}
				}
			}
			if extra := slices.Sorted(func(yield func(string) bool) {
				for name := range got.tools {
					if !wantTools[name] && !yield(name) {
						return
					}
				}
				for uri := range got.resources {
					if !wantURIs[uri] && !yield(uri) {
						return
					}
				}
			}); len(extra) > 0 {
				t.Errorf("the gateway lists what no server does: %v", extra)
			}
		})
	}
}
