package openapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmkit/toolkit/openapi"
)

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"getPetById", "repos/get", "", "über.cool", "1st", strings.Repeat("a_", 80)} {
		f.Add(s, "GET", "/pets/{id}")
	}
	f.Fuzz(func(t *testing.T, id, method, path string) {
		n := openapi.ToolName(id, method, path)
		if n == "" || len(n) > 64 || !utf8.ValidString(n) {
			t.Fatalf("ToolName(%q, %q, %q) = %q", id, method, path, n)
		}
		for _, r := range n {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Fatalf("ToolName(%q, %q, %q) = %q: %q", id, method, path, n, r)
			}
		}
		if n != openapi.ToolName(id, method, path) {
			t.Fatal("not stable")
		}
	})
}

// FuzzDocument loads arbitrary documents and builds and calls their
// tools' schemas: an error is fine, a panic or a hang is not.
func FuzzDocument(f *testing.F) {
	f.Add([]byte(callDoc))
	f.Add([]byte(serverDoc("https://api.example.com")))
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[{"url":"https://x.example"}],"components":{"schemas":{"A":{"$ref":"#/components/schemas/A"}}},"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A","maxLength":3}}}},"responses":{"200":{"description":"ok"}}}}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		p := filepath.Join(t.TempDir(), "doc.json")
		if err := os.WriteFile(p, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := openapi.New(openapi.Config{Document: p, Limits: openapi.Limits{MaxDocumentBytes: 1 << 20}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Reload(context.Background()) != nil {
			return
		}
		tools, _ := c.ListTools(context.Background())
		for _, tl := range tools {
			if len(tl.Name()) > 64 {
				t.Fatalf("name %q", tl.Name())
			}
			in, err := tl.InputSchema()
			if err != nil {
				t.Fatalf("%s: %v", tl.Name(), err)
			}
			if _, err := in.Resolve(nil); err != nil {
				// A schema the document made unresolvable: the toolkit
				// refuses the calls, nothing more.
				continue
			}
			if _, err := json.Marshal(in); err != nil {
				t.Fatal(err)
			}
		}
	})
}
