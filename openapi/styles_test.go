package openapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/llmkit/toolkit/openapi"
)

// TestParameterStyles calls every operation of a document that uses
// every parameter style (path simple, label, matrix; query form,
// spaceDelimited, pipeDelimited, deepObject; headers; cookies; exploded or
// not), each with every parameter set from its schema: the connector
// serializes each request so that openapi3filter, which parses it back
// as the document says, accepts it.
func TestParameterStyles(t *testing.T) {
	for _, doc := range []string{"parameters-style-3.0.json", "parameters-style-3.1.json"} {
		t.Run(doc, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{}`)
			}))
			defer srv.Close()
			tools := mustTools(t, openapi.Config{Document: testdata(t, doc), BaseURL: srv.URL})
			names := keys(tools)
			sort.Strings(names)
			for _, n := range names {
				in := schemaJSON(t, tools[n], false)
				// Every parameter, not only the required ones.
				all := map[string]any{}
				defs, _ := in["$defs"].(map[string]any)
				for p, s := range in["properties"].(map[string]any) {
					all[p] = sample(s, defs, 0)
				}
				raw, _ := json.Marshal(all)
				if _, err := tools[n].Run(context.Background(), raw); err != nil {
					t.Errorf("%s %s: %v", n, raw, err)
				}
			}
		})
	}
}
