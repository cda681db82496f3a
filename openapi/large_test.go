package openapi_test

import (
	"context"
	"testing"

	"github.com/llmkit/toolkit/openapi"
)

// TestLargeDocuments loads real large API descriptions: every operation
// becomes a tool (or is skipped with its reason, logged), every tool's
// schemas resolve.
func TestLargeDocuments(t *testing.T) {
	if testing.Short() {
		t.Skip("large documents: not with -short")
	}
	for _, tc := range []struct {
		doc      string
		minTools int
	}{
		{"github-rest.json.gz", 1200},
		{"stripe.json.gz", 450},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			c, err := load(t, openapi.Config{Document: testdata(t, tc.doc)})
			if err != nil {
				t.Fatal(err)
			}
			tools, _ := c.ListTools(context.Background())
			if len(tools) < tc.minTools {
				t.Errorf("%d tools, want at least %d", len(tools), tc.minTools)
			}
			outputs := 0
			for _, tl := range tools {
				in, err := tl.InputSchema()
				if err != nil {
					t.Fatalf("%s: %v", tl.Name(), err)
				}
				if _, err := in.Resolve(nil); err != nil {
					t.Errorf("%s: input schema: %v", tl.Name(), err)
				}
				out, err := tl.OutputSchema()
				if err != nil {
					t.Fatalf("%s: %v", tl.Name(), err)
				}
				if out != nil {
					outputs++
					if _, err := out.Resolve(nil); err != nil {
						t.Errorf("%s: output schema: %v", tl.Name(), err)
					}
				}
			}
			t.Logf("%d tools, %d with an output schema", len(tools), outputs)
		})
	}
}
