package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// templateURIsOf lists a connector's resource templates.
func templateURIsOf(t *testing.T, c *Connector) []string {
	t.Helper()
	var uris []string
	for _, rt := range mustList(c.ListResourceTemplates(t.Context())) {
		uris = append(uris, rt.URITemplate())
	}
	return uris
}

// TestRemoteTemplates lists a server's resource templates over several
// pages, refreshes them on resources/list_changed with an event only for a
// real change, and reads resources through them with resources/read.
func TestRemoteTemplates(t *testing.T) {
	var events atomic.Int32
	watch, waitRefreshOf := refreshes(t)
	r, s, _ := memoryConnector(t, testserver.Options{PageSize: 1},
		OptOnResourceListChanged(func(context.Context) { events.Add(1) }),
		watch,
	)
	waitRefresh := func() { t.Helper(); waitRefreshOf(sigResources) }
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		if strings.HasSuffix(req.Params.URI, "/missing") {
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: `"` + req.Params.URI + `"`}}}, nil
	}
	if got := templateURIsOf(t, r.Connector); len(got) != 0 {
		t.Fatalf("templates before any: %q", got)
	}

	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://a/{id}", Name: "a", Description: "v1"}, read)
	waitRefresh()
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://b/{+path}", MIMEType: "text/plain"}, read)
	waitRefresh()
	if got, want := templateURIsOf(t, r.Connector), []string{"test://a/{id}", "test://b/{+path}"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("templates %q, want %q (every page)", got, want)
	}
	if events.Load() != 2 {
		t.Errorf("%d events, want 2", events.Load())
	}
	tmpls := mustList(r.ListResourceTemplates(t.Context()))
	a, b := tmpls[0], tmpls[1]
	if a.Name() != "a" || a.Description() != "v1" || a.Type() != "" || b.Name() != "test://b/{+path}" || b.Type() != "text/plain" {
		t.Errorf("fields: %q %q %q, %q %q", a.Name(), a.Description(), a.Type(), b.Name(), b.Type())
	}

	// Reads go to the server through resources/read.
	res, err := b.Open("test://b/x/y.txt")
	mustNotErr(t, err)
	if res.URI() != "test://b/x/y.txt" || res.Type() != "text/plain" {
		t.Errorf("resource %q %q", res.URI(), res.Type())
	}
	data, err := res.Read(t.Context())
	if err != nil || string(data) != `"test://b/x/y.txt"` {
		t.Errorf("read: %q, %v", data, err)
	}
	missing, err := a.Open("test://a/missing")
	mustNotErr(t, err)
	if _, err := missing.Read(t.Context()); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("read of a missing resource: %v", err)
	}
	if _, err := a.Open("test://a/1/2"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("Open of a URI the template does not match: %v", err)
	}
	if _, err := a.Open("no scheme"); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("Open of an invalid URI: %v", err)
	}

	// The same template again: notified, nothing changed, no event, the
	// same value kept.
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://a/{id}", Name: "a", Description: "v1"}, read)
	waitRefresh()
	if events.Load() != 2 || mustList(r.ListResourceTemplates(t.Context()))[0] != a {
		t.Errorf("a no-op change: %d events", events.Load())
	}
	// A new description is a change.
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://a/{id}", Name: "a", Description: "v2"}, read)
	waitRefresh()
	if events.Load() != 3 || mustList(r.ListResourceTemplates(t.Context()))[0].Description() != "v2" {
		t.Errorf("a changed description: %d events", events.Load())
	}
	s.RemoveResourceTemplates("test://a/{id}")
	waitRefresh()
	if got := templateURIsOf(t, r.Connector); events.Load() != 4 || len(got) != 1 {
		t.Errorf("after removal: %q, %d events", got, events.Load())
	}
}

// TestHostileTemplates skips templates that do not parse, are not
// absolute, are huge or repeat an earlier one, with a log line, and keeps
// the rest; a server that refuses resources/templates/list has none.
func TestHostileTemplates(t *testing.T) {
	refuse := atomic.Bool{}
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		var params struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(req.Params, &params)
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "hostile")}
		case "ping":
			return [][]byte{testserver.Result(req, map[string]any{})}
		case "tools/list", "prompts/list", "resources/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		case "resources/templates/list":
			if refuse.Load() {
				return [][]byte{[]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32603,"message":"broken"}}`)}
			}
			if params.Cursor == "" {
				return [][]byte{testserver.Result(req, map[string]any{
					"nextCursor": "2",
					"resourceTemplates": []any{
						map[string]any{"uriTemplate": "test://good/{id}", "name": "good"},
						map[string]any{"uriTemplate": "test://{", "name": "unclosed"},
						map[string]any{"uriTemplate": "{+uri}", "name": "relative"},
						map[string]any{"uriTemplate": "test://" + strings.Repeat("a", 9000), "name": "huge"},
						map[string]any{"uriTemplate": "test://good/{id}", "name": "again"},
						nil,
					},
				})}
			}
			return [][]byte{testserver.Result(req, map[string]any{"resourceTemplates": []any{
				map[string]any{"uriTemplate": "test://more{?q}", "name": "more"},
			}})}
		}
		if len(req.ID) > 0 {
			return [][]byte{[]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"no"}}`)}
		}
		return nil
	}}
	t.Cleanup(raw.Close)
	logs := newLogCapture()
	refreshed := make(chan error, 10)
	r := start(t, "memory://hostile", false, OptDialer(raw.Dial), OptLogger(slogNew(logs)), fastBackoff,
		withAfterRefresh(func(_ uint32, err error) { refreshed <- err }))
	if got := templateURIsOf(t, r.Connector); strings.Join(got, " ") != "test://good/{id} test://more{?q}" {
		t.Errorf("templates %q", got)
	}
	if got := mustList(r.ListResourceTemplates(t.Context()))[0].Name(); got != "good" {
		t.Errorf("the repeated template replaced the first: %q", got)
	}
	// One warning for the page names every item it skipped.
	logs.waitFor(t, "skipping remote items", "kind=resource template", "skipped=4",
		"unclosed", "not absolute", "longer than", `"test://good/{id}": repeats`)

	// Refused: no templates, and the connector stays up.
	refuse.Store(true)
	r.signal(sigResources)
	select {
	case err := <-refreshed:
		mustNotErr(t, err)
	case <-time.After(waitLimit):
		t.Fatal("no refresh")
	}
	if got := templateURIsOf(t, r.Connector); len(got) != 0 {
		t.Errorf("templates kept after the server refused to list them: %q", got)
	}
	logs.waitFor(t, "did not list its resource templates", "broken")
	if st := r.State(); st.Status != toolkit.StatusReady {
		t.Errorf("state %v", st.Status)
	}
}
