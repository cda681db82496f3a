package adaptertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/llmkit/toolkit/model"
)

// Request is one request a fake provider received.
type Request struct {
	Method, Path string
	Header       http.Header
	// Body is the decoded JSON body; Raw is the body as sent.
	Body map[string]any
	Raw  []byte
}

// Provider is a fake model provider: a loopback HTTP server that decodes
// each request's JSON body and answers with what its turn function
// returns, encoded as JSON with status 200, or as server-sent events when
// it is a [Stream]. A turn that returns an error
// fails the test and answers 400 with the error's text, which the SDK
// reports as an API error.
type Provider struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
}

// NewProvider starts a fake provider that stops when the test ends.
func NewProvider(t testing.TB, turn func(Request) (any, error)) *Provider {
	p := &Provider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &req.Body); err != nil {
				t.Errorf("fake provider: %s %s: body is not a JSON object: %v", r.Method, r.URL.Path, err)
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		p.mu.Lock()
		p.requests = append(p.requests, req)
		p.mu.Unlock()
		resp, err := turn(req)
		if err != nil {
			t.Errorf("fake provider: %s %s: %v", r.Method, r.URL.Path, err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": err.Error(), "type": "invalid_request_error"}})
			return
		}
		if s, ok := resp.(Stream); ok {
			s.write(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(p.Close)
	return p
}

// Requests returns the requests received so far.
func (p *Provider) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Get walks a decoded JSON value by object keys (strings) and array
// indexes (ints); it returns nil when the path does not exist.
func Get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		default:
			panic(fmt.Sprintf("adaptertest.Get: bad path element %T", p))
		}
	}
	return v
}

// List returns Get(v, path...) as an array (nil when it is not one).
func List(v any, path ...any) []any {
	l, _ := Get(v, path...).([]any)
	return l
}

// Str returns Get(v, path...) as a string ("" when it is not one).
func Str(v any, path ...any) string {
	s, _ := Get(v, path...).(string)
	return s
}

// JSON returns v encoded as JSON, for messages.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// IsRemote reports whether name is the model name of RemoteTool: the
// namespace, the separator and the sanitized name, then a hash (its name
// has a '.').
func IsRemote(name string) bool {
	return strings.HasPrefix(name, RemoteNS+model.Separator+"docs_search_")
}

// ByName indexes the tool objects of a request (JSON objects with a
// "name") by name, and returns the model name of RemoteTool among them
// ("" when it is not there).
func ByName(tools []any) (byName map[string]map[string]any, remote string) {
	byName = map[string]map[string]any{}
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		name := Str(m, "name")
		byName[name] = m
		if IsRemote(name) {
			remote = name
		}
	}
	return byName, remote
}
