package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/llmkit/toolkit"
)

// ErrInvalidRequest is wrapped by the error of a call whose request does
// not satisfy the document (a parameter or body its schema refuses): the
// request is not sent. It also wraps toolkit.ErrBadParameter.
var ErrInvalidRequest = errors.New("openapi: request does not satisfy the document")

// Run builds the operation's request from input, validates it against the
// document, sends it with the credentials of the operation's security,
// and returns the response: JSON as a json.RawMessage, text as a string,
// anything else as bytes. A response with an error status is a tool error
// (wrapping toolkit.ErrToolFailed) naming the status and the API's
// message.
func (t *operationTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, t.c.limits.CallTimeout)
	defer cancel()
	r, err := t.buildRequest(ctx, input)
	if err != nil {
		return nil, err
	}
	if err := t.validate(ctx, r); err != nil {
		return nil, err
	}
	for k, v := range t.c.cfg.Headers {
		r.req.Header.Set(k, v)
	}
	if err := t.c.creds.apply(ctx, t.a.doc, t.o.op, r.req); err != nil {
		return nil, err
	}
	resp, err := t.c.client.Do(r.req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s %s: %w", toolkit.ErrUnavailable, t.o.method, t.o.path, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s %s: %w", toolkit.ErrUnavailable, t.o.method, t.o.path, err)
	}
	defer resp.Body.Close()
	return t.c.response(resp)
}

// validate checks the request against the operation: parameters, body
// and its media type. Security is the connector's own affair (the
// credentials are added after).
func (t *operationTool) validate(ctx context.Context, r *request) error {
	in := &openapi3filter.RequestValidationInput{
		Request:    r.req,
		PathParams: r.pathParams,
		Route:      t.route,
		Options: &openapi3filter.Options{
			AuthenticationFunc:  func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
			SkipSettingDefaults: true,
		},
	}
	err := validateRequest(ctx, in)
	// The validation read the body: give the request its bytes again.
	r.req.Body = io.NopCloser(bytes.NewReader(r.body))
	if r.body == nil {
		r.req.Body = http.NoBody
	}
	r.req.ContentLength = int64(len(r.body))
	if err != nil {
		return fmt.Errorf("%w: %w: %s", toolkit.ErrBadParameter, ErrInvalidRequest, trim(err.Error(), maxDescription))
	}
	return nil
}

// validationRoute returns the route requests are validated against: the
// operation, less the cookie parameters of array or object type in the
// form style exploded (the default), which openapi3filter cannot decode
// and would refuse even when absent; their values are sent unchecked.
func validationRoute(doc *openapi3.T, o operation) *routers.Route {
	route := &routers.Route{Spec: doc, Path: o.path, PathItem: o.item, Method: o.method, Operation: o.op}
	undecodable := func(ps openapi3.Parameters) (openapi3.Parameters, bool) {
		out := make(openapi3.Parameters, 0, len(ps))
		for _, r := range ps {
			if r != nil && r.Value != nil && r.Value.In == openapi3.ParameterInCookie && r.Value.Schema != nil && r.Value.Schema.Value != nil {
				p := r.Value
				typ := p.Schema.Value.Type
				exploded := p.Explode == nil || *p.Explode
				if (p.Style == "" || p.Style == "form") && exploded && (typ.Is("array") || typ.Is("object")) {
					continue
				}
			}
			out = append(out, r)
		}
		return out, len(out) != len(ps)
	}
	if ps, cut := undecodable(o.item.Parameters); cut {
		item := *o.item
		item.Parameters = ps
		route.PathItem = &item
	}
	if ps, cut := undecodable(o.op.Parameters); cut {
		op := *o.op
		op.Parameters = ps
		route.Operation = &op
	}
	return route
}

// validateRequest runs openapi3filter's validation, turning a panic into
// an error.
func validateRequest(ctx context.Context, in *openapi3filter.RequestValidationInput) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validation failed: %v", r)
		}
	}()
	return openapi3filter.ValidateRequest(ctx, in)
}

// response turns an HTTP response into a tool's output or error.
func (c *Connector) response(resp *http.Response) (any, error) {
	max := c.limits.MaxResponseBytes
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the response: %w", toolkit.ErrUnavailable, err)
	}
	cut := int64(len(data)) > max
	if cut {
		data = data[:max]
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("%w: HTTP %s%s", toolkit.ErrToolFailed, resp.Status, apiMessage(mt, data))
	}
	switch {
	case len(data) == 0:
		return nil, nil
	case isJSON(mt) || mt == "" && json.Valid(data):
		if cut {
			return nil, fmt.Errorf("%w: the JSON response is larger than %d bytes", toolkit.ErrToolFailed, max)
		}
		if !json.Valid(data) {
			return textOf(data, cut, max), nil
		}
		return json.RawMessage(data), nil
	case strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+xml") || mt == "application/xml" || utf8.Valid(data):
		return textOf(data, cut, max), nil
	}
	if cut {
		return nil, fmt.Errorf("%w: the %s response is larger than %d bytes", toolkit.ErrToolFailed, mt, max)
	}
	return data, nil
}

// textOf returns data as text, saying where it was cut.
func textOf(data []byte, cut bool, max int64) string {
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	if cut {
		s += fmt.Sprintf("\n[response cut at %d bytes]", max)
	}
	return s
}

// maxMessage bounds the API's message quoted in an error.
const maxMessage = 2 << 10

// apiMessage returns ": <message>" from an error response's body: the
// message, error, detail or title field of a JSON body, or the start of
// a text one.
func apiMessage(mt string, data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	if isJSON(mt) || json.Valid(data) {
		var m map[string]any
		if json.Unmarshal(data, &m) == nil {
			for _, k := range []string{"message", "error_description", "error", "detail", "title", "errors"} {
				switch v := m[k].(type) {
				case string:
					if v != "" {
						return ": " + trim(v, maxMessage)
					}
				case nil:
				default:
					b, _ := json.Marshal(v)
					return ": " + trim(string(b), maxMessage)
				}
			}
		}
		return ": " + trim(string(data), maxMessage)
	}
	if strings.HasPrefix(mt, "text/html") {
		return ""
	}
	return ": " + trim(strings.ToValidUTF8(string(data), "\uFFFD"), maxMessage)
}
