package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/llmkit/toolkit/openapi"
)

func ExampleNew() {
	// An API and its document.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pets/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"name":"Rex"}`, r.PathValue("id"))
	})
	api := httptest.NewServer(mux)
	defer api.Close()
	dir, _ := os.MkdirTemp("", "openapi-example")
	defer os.RemoveAll(dir)
	doc := filepath.Join(dir, "pets.yaml")
	os.WriteFile(doc, []byte(`openapi: 3.1.0
info: {title: Pets, version: "1"}
paths:
  /pets/{id}:
    get:
      operationId: getPet
      summary: Get a pet
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: the pet
          content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
`), 0o600)

	// The connector: the document's servers replaced by the API's URL (a
	// loopback address, allowed because the operator names it).
	c, err := openapi.New(openapi.Config{Document: doc, BaseURL: api.URL}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Reload(ctx); err != nil { // Run does it, and waits
		log.Fatal(err)
	}
	tools, _ := c.ListTools(ctx)
	t := tools[0]
	fmt.Println(t.Name(), "-", t.Description(), "- read only:", t.Meta().ReadOnlyHint)
	out, err := t.Run(ctx, json.RawMessage(`{"id":"7"}`))
	fmt.Printf("%s %v\n", out, err)
	_, err = t.Run(ctx, json.RawMessage(`{}`))
	fmt.Println(err)
	// Output:
	// getPet - Get a pet - read only: true
	// {"id":"7","name":"Rex"} <nil>
	// bad parameter: openapi: request does not satisfy the document: parameter "id" in path has an error: value is required but missing
}
