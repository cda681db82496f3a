package openapi

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit"
)

// operationTool is the tool of one operation.
type operationTool struct {
	c    *Connector
	a    *api
	o    operation
	name string
	desc string
	meta toolkit.ToolMeta

	params []param
	body   *body
	route  *routers.Route // what requests are validated against

	input, output []byte // the schemas as JSON; output nil when none

	inOnce, outOnce sync.Once
	in, out         *jsonschema.Schema
	inErr, outErr   error
}

// param is one parameter of the operation, under its property of the
// input.
type param struct {
	prop string // the input property
	*openapi3.Parameter
}

// body is the operation's request body, under its property of the input.
type body struct {
	prop      string
	mediaType string
	required  bool
	media     *openapi3.MediaType
}

// bodyProperty is the input property of the request body (requestBody
// when a parameter is already called body).
const bodyProperty = "body"

// newOperationTool makes the tool of o.
func newOperationTool(c *Connector, a *api, o operation, name string) (*operationTool, error) {
	t := &operationTool{c: c, a: a, o: o, name: name, meta: metaOf(o), route: validationRoute(a.doc, o)}
	t.desc = description(o.op)
	if err := t.makeInput(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if err := t.makeOutput(); err != nil {
		c.logger.Warn("openapi: output schema dropped", "tool", name, "reason", err)
		t.output = nil
	}
	return t, nil
}

// description joins the operation's summary and description.
func description(op *openapi3.Operation) string {
	var parts []string
	if op.Deprecated {
		parts = append(parts, "Deprecated.")
	}
	if s := strings.TrimSpace(op.Summary); s != "" {
		parts = append(parts, s)
	}
	if d := strings.TrimSpace(op.Description); d != "" && d != strings.TrimSpace(op.Summary) {
		parts = append(parts, d)
	}
	return trim(strings.Join(parts, "\n\n"), maxDescription)
}

// metaOf gives the hints the method implies: GET, HEAD and OPTIONS read
// only; DELETE destructive (and idempotent); PUT idempotent. Every
// operation reaches outside the process (open world).
func metaOf(o operation) toolkit.ToolMeta {
	yes := true
	m := toolkit.ToolMeta{Title: trim(strings.TrimSpace(o.op.Summary), maxTitle), OpenWorldHint: &yes}
	switch o.method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		m.ReadOnlyHint = true
	case http.MethodDelete:
		m.DestructiveHint = &yes
		m.IdempotentHint = true
	case http.MethodPut:
		m.IdempotentHint = true
	}
	return m
}

// parameters returns the operation's parameters, those of the path item
// first, an operation's overriding the path item's of the same name and
// location.
func (o operation) parameters() []*openapi3.Parameter {
	var out []*openapi3.Parameter
	add := func(ps openapi3.Parameters, override bool) {
		for _, r := range ps {
			if r == nil || r.Value == nil {
				continue
			}
			p := r.Value
			if i := slices.IndexFunc(out, func(q *openapi3.Parameter) bool { return q.Name == p.Name && q.In == p.In }); i >= 0 {
				if override {
					out[i] = p
				}
				continue
			}
			out = append(out, p)
		}
	}
	add(o.item.Parameters, false)
	add(o.op.Parameters, true)
	return out
}

// makeInput builds the input schema: one property per parameter (named
// after it, or "<in>_<name>" when two locations share a name), and the
// body under "body".
func (t *operationTool) makeInput() error {
	s := t.a.schemas
	deps := map[string]bool{}
	props := map[string]any{}
	var required []string
	for _, p := range t.o.parameters() {
		switch p.In {
		case openapi3.ParameterInPath, openapi3.ParameterInQuery, openapi3.ParameterInHeader, openapi3.ParameterInCookie:
		default:
			return fmt.Errorf("parameter %s: location %s", quote(p.Name), quote(p.In))
		}
		if p.In == openapi3.ParameterInHeader && isReservedHeader(p.Name) {
			continue // set by the connector, never by the caller
		}
		prop := p.Name
		if _, taken := props[prop]; taken || prop == "" {
			prop = p.In + "_" + p.Name
			if _, taken := props[prop]; taken {
				return fmt.Errorf("parameter %s in %s: twice", quote(p.Name), p.In)
			}
		}
		sref := p.Schema
		if sref == nil {
			for _, mt := range p.Content { // a parameter described by content
				if mt != nil {
					sref = mt.Schema
				}
				break
			}
		}
		node, err := s.node(sref, deps)
		if err != nil {
			return fmt.Errorf("parameter %s: %w", quote(p.Name), err)
		}
		if m, ok := node.(map[string]any); ok && p.Description != "" {
			if _, has := m["description"]; !has {
				m["description"] = trim(p.Description, maxDescription)
			}
		}
		props[prop] = node
		if p.Required || p.In == openapi3.ParameterInPath {
			required = append(required, prop)
		}
		t.params = append(t.params, param{prop: prop, Parameter: p})
	}
	if rb := t.o.op.RequestBody; rb != nil && rb.Value != nil {
		mediaType, media := pickMedia(rb.Value.Content)
		if media != nil {
			prop := bodyProperty
			if _, taken := props[prop]; taken {
				prop = "requestBody"
			}
			node, err := s.node(media.Schema, deps)
			if err != nil {
				return fmt.Errorf("body: %w", err)
			}
			if m, ok := node.(map[string]any); ok && rb.Value.Description != "" {
				if _, has := m["description"]; !has {
					m["description"] = trim(rb.Value.Description, maxDescription)
				}
			}
			props[prop] = node
			if rb.Value.Required {
				required = append(required, prop)
			}
			t.body = &body{prop: prop, mediaType: mediaType, required: rb.Value.Required, media: media}
		}
	}
	root := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		slices.Sort(required)
		root["required"] = required
	}
	data, err := s.assemble(root, deps, inputLevels)
	if err != nil {
		return err
	}
	t.input = data
	return nil
}

// makeOutput builds the output schema from the first success response
// with a JSON body whose schema describes an object (MCP's structured
// content is an object); none otherwise.
func (t *operationTool) makeOutput() error {
	r := successResponse(t.o.op.Responses)
	if r == nil {
		return nil
	}
	_, media := pickJSON(r.Content)
	if media == nil || media.Schema == nil {
		return nil
	}
	s := t.a.schemas
	deps := map[string]bool{}
	node, err := s.node(media.Schema, deps)
	if err != nil {
		return err
	}
	root, ok := s.objectRoot(node)
	if !ok {
		return nil
	}
	data, err := s.assemble(root, deps, outputLevels)
	if err != nil {
		return err
	}
	t.output = data
	return nil
}

// inputLevels and outputLevels are how many references deep a tool's
// input and output schemas describe components; farther ones accept any
// value. The schemas tell the model the shape of the call and of the
// answer: their first levels do, and an API whose objects all refer to
// each other (Stripe's) would otherwise give every tool its whole
// document. The request is still checked against the whole document
// before it is sent.
const (
	inputLevels  = 3
	outputLevels = 1
)

// successResponse returns the operation's first 2xx response: 200, 201,
// ... then 2XX.
func successResponse(rs *openapi3.Responses) *openapi3.Response {
	if rs == nil {
		return nil
	}
	keys := rs.Keys()
	slices.Sort(keys)
	for _, k := range keys {
		if len(k) == 3 && k[0] == '2' {
			if r := rs.Value(k); r != nil && r.Value != nil {
				return r.Value
			}
		}
	}
	return nil
}

// isJSON reports whether a media type is JSON (application/json, or a
// +json suffix).
func isJSON(mt string) bool {
	mt, _, _ = strings.Cut(strings.ToLower(mt), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "*/*"
}

// pickJSON returns the JSON media type of content, if any.
func pickJSON(content openapi3.Content) (string, *openapi3.MediaType) {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if isJSON(k) && content[k] != nil {
			return k, content[k]
		}
	}
	return "", nil
}

// bodyMediaOrder are the request media types, most preferred first,
// after JSON.
var bodyMediaOrder = []string{"application/x-www-form-urlencoded", "multipart/form-data", "text/plain", "application/octet-stream"}

// pickMedia returns the request body's media type the connector sends:
// JSON, else a form, multipart, text or bytes.
func pickMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	if k, m := pickJSON(content); m != nil {
		if k == "*/*" {
			k = "application/json"
		}
		return k, m
	}
	for _, want := range bodyMediaOrder {
		for k, m := range content {
			if m != nil && strings.EqualFold(strings.TrimSpace(strings.Split(k, ";")[0]), want) {
				return k, m
			}
		}
	}
	return "", nil
}

// isReservedHeader reports whether a header parameter is one the
// connector sets itself (OpenAPI says such parameters are ignored).
func isReservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Accept", "Content-Type", "Authorization":
		return true
	}
	return false
}

// Name returns the tool's name.
func (t *operationTool) Name() string { return t.name }

// Description returns the operation's summary and description.
func (t *operationTool) Description() string { return t.desc }

// Meta returns the hints of the operation's method.
func (t *operationTool) Meta() toolkit.ToolMeta { return t.meta }

// InputSchema returns the schema of the parameters and body.
func (t *operationTool) InputSchema() (*jsonschema.Schema, error) {
	t.inOnce.Do(func() { t.in, t.inErr = jsonSchema(t.input) })
	return t.in, t.inErr
}

// OutputSchema returns the schema of the success response, or nil.
func (t *operationTool) OutputSchema() (*jsonschema.Schema, error) {
	if t.output == nil {
		return nil, nil
	}
	t.outOnce.Do(func() { t.out, t.outErr = jsonSchema(t.output) })
	return t.out, t.outErr
}

// digest is the SHA-256 of what the tool's definition and calls depend
// on.
func (t *operationTool) digest() [32]byte {
	h := sha256.New()
	def, _ := json.Marshal([]any{t.name, t.desc, t.meta.Title, t.o.method, t.o.path, t.input, t.output, t.a.server.String()})
	h.Write(def)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
