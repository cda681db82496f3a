package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
)

// callDoc exercises parameters of every location and style, bodies of
// every media type, and every kind of security scheme.
const callDoc = `openapi: 3.0.3
info: {title: calls, version: "1"}
servers: [{url: "https://api.example.com/v1"}]
components:
  securitySchemes:
    key_header: {type: apiKey, in: header, name: X-Key}
    key_query: {type: apiKey, in: query, name: key}
    key_cookie: {type: apiKey, in: cookie, name: session}
    bearer: {type: http, scheme: bearer}
    basic: {type: http, scheme: basic}
    cc:
      type: oauth2
      flows:
        clientCredentials: {tokenUrl: "TOKEN_URL", scopes: {read: read things}}
  schemas:
    Item:
      type: object
      required: [name]
      properties:
        name: {type: string}
        size: {type: integer, minimum: 1, nullable: true}
        tags: {type: array, items: {type: string}}
paths:
  /items/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: integer}}
    get:
      operationId: getItem
      security: [{key_header: []}]
      parameters:
        - {name: fields, in: query, schema: {type: array, items: {type: string}}}
        - {name: sep, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: filter, in: query, style: deepObject, schema: {type: object, properties: {a: {type: string}}}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: pref, in: cookie, schema: {type: string}}
        - {name: langs, in: cookie, schema: {type: array, items: {type: string}}}
        - {name: id, in: query, schema: {type: string}}
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {$ref: "#/components/schemas/Item"}}}
        "404":
          description: missing
    put:
      operationId: putItem
      security: [{bearer: []}]
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/Item"}}}
      responses: {"204": {description: done}}
    delete:
      operationId: deleteItem
      security: [{basic: []}, {key_query: []}]
      responses: {"204": {description: done}}
  /forms:
    post:
      operationId: postForm
      security: [{key_cookie: []}]
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {a: {type: string}, n: {type: array, items: {type: integer}}}}
      responses: {"200": {description: ok, content: {text/plain: {schema: {type: string}}}}}
  /upload:
    post:
      operationId: upload
      security: [{cc: [read]}]
      requestBody:
        content:
          multipart/form-data:
            schema: {type: object, properties: {file: {type: string, format: binary}, meta: {type: object}}}
      responses: {"200": {description: ok}}
  /big:
    get:
      operationId: big
      responses: {"200": {description: ok}}
`

// seen is what the test server received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func (s *seen) last() (*http.Request, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1], s.body[len(s.body)-1]
}

func callServer(t *testing.T) (*httptest.Server, *seen) {
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			r.ParseForm()
			if u, p, _ := r.BasicAuth(); u != "cid" || p != "csecret" || r.Form.Get("grant_type") != "client_credentials" {
				http.Error(w, "bad client", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"tok-cc","token_type":"Bearer","expires_in":3600}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.body = append(s.body, string(b))
		s.mu.Unlock()
		switch {
		case r.URL.Path == "/v1/items/404":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"no item 404","documentation_url":"x"}`)
		case r.URL.Path == "/v1/big":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("x", 3000))
		case r.URL.Path == "/v1/forms":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "fine")
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"one","size":null}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func callTools(t *testing.T, srv *httptest.Server, limits openapi.Limits) map[string]toolkit.Tool {
	doc := writeDoc(t, strings.ReplaceAll(callDoc, "TOKEN_URL", srv.URL+"/token"))
	return mustTools(t, openapi.Config{
		Document: doc,
		BaseURL:  srv.URL + "/v1",
		Limits:   limits,
		Headers:  map[string]string{"User-Agent": "toolkit-test"},
		Credentials: map[string]openapi.Credential{
			"key_header": {APIKey: "k-header"},
			"key_query":  {APIKey: "k-query"},
			"key_cookie": {APIKey: "k-cookie"},
			"bearer":     {Token: "t-bearer"},
			"cc":         {ClientID: "cid", ClientSecret: "csecret"},
		},
	})
}

func run(t *testing.T, tl toolkit.Tool, input string) (any, error) {
	t.Helper()
	return tl.Run(context.Background(), json.RawMessage(input))
}

func TestCallParameters(t *testing.T) {
	srv, s := callServer(t)
	tools := callTools(t, srv, openapi.Limits{})
	in := schemaJSON(t, tools["getItem"], false)
	props := in["properties"].(map[string]any)
	if props["id"] == nil || props["query_id"] == nil {
		t.Fatalf("the path id and the query id: %v", props)
	}
	out, err := run(t, tools["getItem"], `{"id":7,"query_id":"q","fields":["a","b"],"sep":["x","y"],"filter":{"a":"b"},"X-Trace":"tr","pref":"dark","langs":["en","fr"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if raw, ok := out.(json.RawMessage); !ok || string(raw) != `{"name":"one","size":null}` {
		t.Errorf("output %T %s", out, out)
	}
	r, _ := s.last()
	q := r.URL.Query()
	if r.URL.Path != "/v1/items/7" || strings.Join(q["fields"], ",") != "a,b" || q.Get("sep") != "x|y" || q.Get("filter[a]") != "b" || q.Get("id") != "q" {
		t.Errorf("URL %s", r.URL)
	}
	if r.Header.Get("X-Trace") != "tr" || r.Header.Get("X-Key") != "k-header" || r.Header.Get("User-Agent") != "toolkit-test" {
		t.Errorf("headers %v", r.Header)
	}
	if c, err := r.Cookie("pref"); err != nil || c.Value != "dark" {
		t.Errorf("cookie pref: %v %v", c, err)
	}
	// An array in a cookie (form, exploded: the default), which
	// openapi3filter cannot decode, is sent unvalidated.
	if c, err := r.Cookie("langs"); err != nil || c.Value != "en,fr" {
		t.Errorf("cookie langs: %v %v", c, err)
	}
	// The output schema comes from the 200 response, nullable as 2020-12.
	o := schemaJSON(t, tools["getItem"], true)
	size := o["properties"].(map[string]any)["size"].(map[string]any)
	if typ, _ := size["type"].([]any); len(typ) != 2 || typ[1] != "null" {
		t.Errorf("size: %v", size)
	}
}

func TestCallBodiesAndAuth(t *testing.T) {
	srv, s := callServer(t)
	tools := callTools(t, srv, openapi.Limits{})

	if _, err := run(t, tools["putItem"], `{"id":1,"body":{"name":"n","tags":["t"]}}`); err != nil {
		t.Fatal(err)
	}
	r, b := s.last()
	if r.Header.Get("Content-Type") != "application/json" || b != `{"name":"n","tags":["t"]}` || r.Header.Get("Authorization") != "Bearer t-bearer" {
		t.Errorf("put: %v %s", r.Header, b)
	}

	// basic has no credential: the second requirement, the query key.
	if _, err := run(t, tools["deleteItem"], `{"id":1}`); err != nil {
		t.Fatal(err)
	}
	if r, _ = s.last(); r.URL.Query().Get("key") != "k-query" || r.Header.Get("Authorization") != "" {
		t.Errorf("delete: %s %v", r.URL, r.Header)
	}

	out, err := run(t, tools["postForm"], `{"body":{"a":"x y","n":[1,2]}}`)
	if err != nil || out != "fine" {
		t.Fatalf("form: %v %v", out, err)
	}
	r, b = s.last()
	if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || b != "a=x+y&n=1&n=2" {
		t.Errorf("form: %v %q", r.Header, b)
	}
	if c, err := r.Cookie("session"); err != nil || c.Value != "k-cookie" {
		t.Errorf("cookie key: %v %v", c, err)
	}

	if _, err := run(t, tools["upload"], `{"body":{"file":"content","meta":{"k":1}}}`); err != nil {
		t.Fatal(err)
	}
	r, b = s.last()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data; boundary=") || !strings.Contains(b, "content") || !strings.Contains(b, `{"k":1}`) {
		t.Errorf("multipart: %v %q", r.Header, b)
	}
	if r.Header.Get("Authorization") != "Bearer tok-cc" {
		t.Errorf("client credentials: %q", r.Header.Get("Authorization"))
	}
}

func TestCallErrors(t *testing.T) {
	srv, s := callServer(t)
	tools := callTools(t, srv, openapi.Limits{MaxResponseBytes: 1000})

	_, err := run(t, tools["getItem"], `{"id":404}`)
	if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), "404 Not Found: no item 404") {
		t.Errorf("404: %v", err)
	}

	// A request the document refuses is not sent.
	s.mu.Lock()
	before := len(s.reqs)
	s.mu.Unlock()
	_, err = run(t, tools["getItem"], `{"id":"seven"}`)
	if !errors.Is(err, openapi.ErrInvalidRequest) || !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("invalid path parameter: %v", err)
	}
	_, err = run(t, tools["putItem"], `{"id":1,"body":{"size":0}}`)
	if !errors.Is(err, openapi.ErrInvalidRequest) {
		t.Errorf("invalid body: %v", err)
	}
	s.mu.Lock()
	after := len(s.reqs)
	s.mu.Unlock()
	if after != before {
		t.Errorf("%d invalid requests were sent", after-before)
	}

	out, err := run(t, tools["big"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if txt, _ := out.(string); len(txt) > 1100 || !strings.HasSuffix(txt, "[response cut at 1000 bytes]") {
		t.Errorf("big: %d bytes: %.80q", len(txt), txt)
	}
}
