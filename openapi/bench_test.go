package openapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/llmkit/toolkit/openapi"
)

// BenchmarkLoad loads a large document and lists its tools, reporting
// the heap kept per tool.
func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct {
		name, doc string
		include   openapi.Selection
	}{
		{"github", "github-rest.json.gz", openapi.Selection{}},
		{"github-issues", "github-rest.json.gz", openapi.Selection{Tags: []string{"issues"}}},
		{"stripe", "stripe.json.gz", openapi.Selection{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := testdata(b, tc.doc)
			var tools int
			var kept uint64
			for b.Loop() {
				c, err := openapi.New(openapi.Config{Document: path, Include: tc.include}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Reload(context.Background()); err != nil {
					b.Fatal(err)
				}
				list, _ := c.ListTools(context.Background())
				tools = len(list)
				for _, tl := range list { // as a server face lists them
					if _, err := tl.InputSchema(); err != nil {
						b.Fatal(err)
					}
					if _, err := tl.OutputSchema(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				kept = ms.HeapAlloc
				runtime.KeepAlive(c)
				b.StartTimer()
			}
			b.ReportMetric(float64(tools), "tools")
			b.ReportMetric(float64(kept)/float64(max(tools, 1)), "heap-B/tool")
		})
	}
}

// BenchmarkCall calls getPetById through the connector's tool (request
// built from the input, validated against the document, response read)
// beside the same request written by hand with net/http, against the
// same local server.
func BenchmarkCall(b *testing.B) {
	pet := []byte(`{"id":7,"name":"doggie","photoUrls":["https://example.com/p.png"],"status":"available"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(pet)
	}))
	defer srv.Close()
	b.Run("openapi", func(b *testing.B) {
		tools := mustTools(b, openapi.Config{Document: testdata(b, "petstore-3.0.json"), BaseURL: srv.URL,
			Credentials: map[string]openapi.Credential{"api_key": {APIKey: "k"}}})
		tl := tools["getPetById"]
		in := json.RawMessage(`{"petId":7}`)
		for b.Loop() {
			if _, err := tl.Run(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net-http", func(b *testing.B) {
		client := &http.Client{}
		for b.Loop() {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/pet/7", nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("api_key", "k")
			req.Header.Set("Accept", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !json.Valid(data) {
				b.Fatal(err)
			}
		}
	})
}
