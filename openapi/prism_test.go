package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/openapi"
)

// violations records the sl-violations header of every Prism response.
type violations struct {
	mu   sync.Mutex
	seen map[string]string // "METHOD path" -> violations
	base http.RoundTripper
}

func (v *violations) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.base.RoundTrip(req)
	if err == nil {
		if h := resp.Header.Get("sl-violations"); h != "" {
			v.mu.Lock()
			v.seen[req.Method+" "+req.URL.Path] = h
			v.mu.Unlock()
		}
	}
	return resp, err
}

// TestPrismExampleCalls calls every operation of the Petstore documents
// and examples of form and file uploads,
// with an input made from its input schema, through a toolkit against
// Prism, which checks each request against the document: none may have a
// violation.
func TestPrismExampleCalls(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		tools int
	}{
		{"petstore-3.0.json", 20},
		{"petstore-3.1.yaml", 20},
		{"form-data-3.0.json", 1},
		{"file-uploads-3.0.json", 3},
	} {
		doc := tc.doc
		t.Run(doc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			path := testdata(t, doc)
			prism := peers.StartPrism(t, ctx, path)
			rec := &violations{seen: map[string]string{}, base: http.DefaultTransport}
			cfg := openapi.Config{
				Document:   path,
				BaseURL:    prism.URL,
				HTTPClient: &http.Client{Transport: rec},
				Credentials: map[string]openapi.Credential{
					"api_key":       {APIKey: "special-key"},
					"petstore_auth": {Token: "a-token"},
				},
			}
			tk, stop := runToolkit(t, "petstore", cfg)
			defer stop()
			items, err := tk.List(ctx, toolkit.ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var tools []toolkit.Tool
			for _, it := range items.Items {
				if tl, ok := it.Value.(toolkit.Tool); ok {
					tools = append(tools, tl)
				}
			}
			if len(tools) != tc.tools {
				t.Fatalf("%d tools, want %d", len(tools), tc.tools)
			}
			sort.Slice(tools, func(i, j int) bool { return tools[i].Name() < tools[j].Name() })
			ok := 0
			for _, tl := range tools {
				in := exampleInput(schemaJSON(t, tl, false))
				raw, _ := json.Marshal(in)
				_, err := tk.Call(ctx, "petstore."+tl.Name(), toolkit.Input(json.RawMessage(raw)))
				switch {
				case err == nil:
					ok++
				case errors.Is(err, toolkit.ErrToolFailed):
					// An HTTP error status the document describes (Prism
					// answers some operations only with their 4xx).
					t.Logf("%s %s: %v", tl.Name(), raw, err)
				default:
					t.Errorf("%s %s: %v", tl.Name(), raw, err)
				}
			}
			for k, v := range rec.seen {
				t.Errorf("Prism found violations in %s: %s", k, v)
			}
			t.Logf("%d of %d calls answered with success", ok, len(tools))
		})
	}
}
