package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
)

// TestDocumentFromURL: a document fetched over HTTP whose server is
// relative is called at the document's origin; an API that redirects a
// call to a private address is refused at the redirect.
func TestDocumentFromURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /spec/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		io.WriteString(w, `openapi: 3.1.0
info: {title: remote, version: "2"}
servers: [{url: /api}]
paths:
  /hello:
    get:
      operationId: hello
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /away:
    get:
      operationId: away
      responses: {"200": {description: ok}}
`)
	})
	mux.HandleFunc("GET /api/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"hello":"world"}`)
	})
	mux.HandleFunc("GET /api/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/internal", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tools := mustTools(t, openapi.Config{Document: srv.URL + "/spec/openapi.yaml"})
	out, err := tools["hello"].Run(context.Background(), json.RawMessage(`{}`))
	if err != nil || string(out.(json.RawMessage)) != `{"hello":"world"}` {
		t.Fatalf("hello: %v %v", out, err)
	}
	_, err = tools["away"].Run(context.Background(), json.RawMessage(`{}`))
	if !errors.Is(err, openapi.ErrDestinationRefused) || !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("redirect to a private address: %v", err)
	}

	// A document URL that is not found fails the load.
	if _, err := load(t, openapi.Config{Document: srv.URL + "/spec/missing.yaml"}); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("missing document: %v", err)
	}
}

// TestDocumentServerHangs: a document server that never answers fails the
// load once the call timeout passes.
func TestDocumentServerHangs(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := load(t, openapi.Config{Document: srv.URL + "/openapi.json", Limits: openapi.Limits{CallTimeout: 50 * time.Millisecond}})
	if !errors.Is(err, toolkit.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging document server: %v", err)
	}
}
