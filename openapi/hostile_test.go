package openapi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
)

type toolkitEvent = toolkit.ConnectorEvent

func TestHostileDocuments(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"openapi":"3.0.3","info":{"title":"many","version":"1"},"servers":[{"url":"https://api.example.com"}],"paths":{`)
	for i := range 50_000 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"/p%d":{"get":{"responses":{"200":{"description":"ok"}}}}`, i)
	}
	many.WriteString(`}}`)

	var wide strings.Builder
	wide.WriteString(`{"openapi":"3.0.3","info":{"title":"wide","version":"1"},"servers":[{"url":"https://api.example.com"}],"components":{"schemas":{"Huge":{"type":"object","properties":{`)
	for i := range 20_000 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"property_number_%d":{"type":"string","description":"a property of a schema far larger than any tool needs"}`, i)
	}
	wide.WriteString(`}}}},"paths":{"/huge":{"post":{"operationId":"huge","requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Huge"}}}},"responses":{"200":{"description":"ok"}}}},"/small":{"get":{"operationId":"small","responses":{"200":{"description":"ok"}}}}}}`)

	deep := `{"openapi":"3.0.3","info":{"title":"deep","version":"1"},"servers":[{"url":"https://api.example.com"}],"paths":{"/deep":{"post":{"operationId":"deep","requestBody":{"content":{"application/json":{"schema":` +
		strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{"type":"string"}` + strings.Repeat(`}}`, 200) +
		`}}},"responses":{"200":{"description":"ok"}}}},"/small":{"get":{"operationId":"small","responses":{"200":{"description":"ok"}}}}}}`

	bomb := "openapi: 3.0.3\ninfo: {title: bomb, version: '1'}\nservers: [{url: 'https://api.example.com'}]\nx-a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for i := range 9 {
		name := fmt.Sprintf("b%d", i)
		bomb += fmt.Sprintf("x-%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	bomb += "paths: {}\n"

	for _, tc := range []struct {
		name, doc string
		cfg       openapi.Config
		wantErr   error  // nil: loads
		wantText  string // in the error
		wantTools []string
	}{
		{name: "recursive refs", doc: `openapi: 3.1.0
info: {title: r, version: "1"}
servers: [{url: "https://api.example.com"}]
components:
  schemas:
    Node: {type: object, properties: {next: {$ref: "#/components/schemas/Node"}, kids: {type: array, items: {$ref: "#/components/schemas/Tree"}}}}
    Tree: {type: object, properties: {node: {$ref: "#/components/schemas/Node"}}}
paths:
  /n:
    post:
      operationId: put
      requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}}
      responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Tree"}}}}}
`, wantTools: []string{"put"}},
		{name: "50,000 operations", doc: many.String(), wantErr: openapi.ErrDocument, wantText: "more than 10000 operations"},
		{name: "huge schema", doc: wide.String(), cfg: openapi.Config{Limits: openapi.Limits{MaxSchemaBytes: 256 << 10}}, wantTools: []string{"small"}},
		{name: "deep schema", doc: deep, wantTools: []string{"small"}},
		{name: "too large", doc: many.String(), cfg: openapi.Config{Limits: openapi.Limits{MaxDocumentBytes: 1 << 20}}, wantErr: openapi.ErrDocument, wantText: "larger than 1048576 bytes"},
		{name: "alias bomb", doc: bomb, wantErr: openapi.ErrDocument},
		{name: "swagger 2", doc: `{"swagger":"2.0","info":{"title":"s","version":"1"},"paths":{}}`, wantErr: openapi.ErrDocument},
		{name: "not a document", doc: "\x00\x01 not yaml: [", wantErr: openapi.ErrDocument},
		{name: "external ref", doc: `openapi: 3.0.3
info: {title: e, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /e:
    get:
      responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "/etc/passwd#/x"}}}}}
`, wantErr: openapi.ErrDocument},
		{name: "loopback server", doc: serverDoc("http://127.0.0.1:8080"), wantErr: openapi.ErrDestinationRefused, wantText: "loopback"},
		{name: "private server", doc: serverDoc("http://10.1.2.3/api"), wantErr: openapi.ErrDestinationRefused, wantText: "private"},
		{name: "metadata server", doc: serverDoc("http://169.254.169.254/latest"), wantErr: openapi.ErrDestinationRefused, wantText: "link-local"},
		{name: "localhost server", doc: serverDoc("http://localhost:9000"), wantErr: openapi.ErrDestinationRefused},
		{name: "loopback allowed", doc: serverDoc("http://127.0.0.1:8080"), cfg: openapi.Config{Allow: []string{"http://127.0.0.1:8080"}}, wantTools: []string{"get"}},
		{name: "not http", doc: serverDoc("file:///etc"), wantErr: openapi.ErrDocument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Document = writeDoc(t, tc.doc)
			c, err := load(t, cfg)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(fmt.Sprint(err), tc.wantText) {
					t.Fatalf("error %v, want %v with %q", err, tc.wantErr, tc.wantText)
				}
				t.Logf("refused: %.200v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tools, _ := c.ListTools(context.Background())
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name())
				if _, err := tl.InputSchema(); err != nil {
					t.Errorf("%s: %v", tl.Name(), err)
				}
				if _, err := tl.OutputSchema(); err != nil {
					t.Errorf("%s: %v", tl.Name(), err)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.wantTools, ",") {
				t.Errorf("tools %v, want %v", names, tc.wantTools)
			}
		})
	}
}

func serverDoc(server string) string {
	return `openapi: 3.0.3
info: {title: s, version: "1"}
servers: [{url: "` + server + `"}]
paths:
  /x:
    get: {operationId: get, responses: {"200": {description: ok}}}
`
}

// TestDocumentChange: Reload serves a changed document's tools and
// reports the change; an unchanged one reports nothing; a broken one
// keeps the tools.
func TestDocumentChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(serverDoc("https://api.example.com"))
	events := make(chan string, 10)
	c, err := openapi.New(openapi.Config{Document: path}, func(ev toolkitEvent) { events <- ev.Kind.String() })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Reload(ctx); err != nil || len(events) != 0 {
		t.Fatalf("unchanged: %v, %d events", err, len(events))
	}
	write(strings.Replace(serverDoc("https://api.example.com"), "operationId: get,", "operationId: get, summary: changed,", 1))
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := <-events; ev != "tool_list_changed" {
		t.Errorf("event %s", ev)
	}
	write("not: [a document")
	if err := c.Reload(ctx); !errors.Is(err, openapi.ErrDocument) {
		t.Errorf("broken: %v", err)
	}
	tools, _ := c.ListTools(ctx)
	if len(tools) != 1 || tools[0].Description() != "changed" {
		t.Errorf("tools after a broken document: %v", tools)
	}
}
