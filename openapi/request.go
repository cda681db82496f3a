package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/llmkit/toolkit"
)

// request is a call's HTTP request before it is sent, with what its
// validation needs.
type request struct {
	req        *http.Request
	body       []byte
	pathParams map[string]string
}

// buildRequest makes the HTTP request of a call from the tool's input:
// the path parameters in the path, the others in the query, headers and
// cookies, serialized as their style says, and the body in the chosen
// media type.
func (t *operationTool) buildRequest(ctx context.Context, input json.RawMessage) (*request, error) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(input)) > 0 {
		if err := json.Unmarshal(input, &args); err != nil {
			return nil, fmt.Errorf("%w: input: %v", toolkit.ErrBadParameter, err)
		}
	}
	path := t.o.path
	query := url.Values{}
	header := http.Header{}
	var cookies []*http.Cookie
	pathParams := map[string]string{}
	for _, p := range t.params {
		raw, ok := args[p.prop]
		if !ok || string(raw) == "null" {
			continue
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", toolkit.ErrBadParameter, p.prop, err)
		}
		style := p.Style
		if style == "" { // the defaults: form in the query and cookies, simple elsewhere
			style = "simple"
			if p.In == openapi3.ParameterInQuery || p.In == openapi3.ParameterInCookie {
				style = "form"
			}
		}
		explode := style == "form"
		if p.Explode != nil {
			explode = *p.Explode
		}
		switch p.In {
		case openapi3.ParameterInPath:
			s := pathValue(v, style, explode, p.Name)
			pathParams[p.Name] = s
			path = strings.ReplaceAll(path, "{"+p.Name+"}", s)
		case openapi3.ParameterInQuery:
			addQuery(query, p.Name, v, style, explode)
		case openapi3.ParameterInHeader:
			header.Set(p.Name, simple(v, explode))
		case openapi3.ParameterInCookie:
			cookies = append(cookies, &http.Cookie{Name: p.Name, Value: simple(v, false), Quoted: false})
		}
	}
	u := *t.a.server
	u.Path = u.Path + path
	u.RawPath = ""
	if enc := query.Encode(); enc != "" {
		u.RawQuery = enc
	}
	var data []byte
	var contentType string
	if b := t.body; b != nil {
		if raw, ok := args[b.prop]; ok && string(raw) != "null" {
			var err error
			if data, contentType, err = encodeBody(b, raw); err != nil {
				return nil, err
			}
		}
	}
	req, err := http.NewRequestWithContext(ctx, t.o.method, u.String(), bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", toolkit.ErrBadParameter, err)
	}
	if data == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.GetBody = nil
	for k, vs := range header {
		req.Header[k] = vs
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, */*;q=0.5")
	return &request{req: req, body: data, pathParams: pathParams}, nil
}

// scalar formats a primitive JSON value as text; "" for null.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// sortedObject returns the keys of an object in order.
func sortedObject(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// simple serializes a value in the simple style: arrays and objects as
// comma-separated lists (an object's keys and values, or key=value pairs
// when exploded).
func simple(v any, explode bool) string { return joined(v, ",", explode, nil) }

// joined serializes a value as a list separated by sep: an array's
// elements, an object's keys and values (key=value pairs when exploded),
// each passed through esc when it is not nil; the separators are not.
func joined(v any, sep string, explode bool, esc func(string) string) string {
	if esc == nil {
		esc = func(s string) string { return s }
	}
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = esc(scalar(e))
		}
		return strings.Join(parts, sep)
	case map[string]any:
		var parts []string
		for _, k := range sortedObject(x) {
			if explode {
				parts = append(parts, esc(k)+"="+esc(scalar(x[k])))
			} else {
				parts = append(parts, esc(k), esc(scalar(x[k])))
			}
		}
		return strings.Join(parts, sep)
	}
	return esc(scalar(v))
}

// pathValue serializes a path parameter in its style (simple, label or
// matrix), each value escaped for a path segment and the separators not.
func pathValue(v any, style string, explode bool, name string) string {
	esc := url.PathEscape
	switch style {
	case "label":
		sep := ","
		if explode {
			sep = "."
		}
		return "." + joined(v, sep, explode, esc)
	case "matrix":
		switch x := v.(type) {
		case []any:
			if explode {
				var b strings.Builder
				for _, e := range x {
					b.WriteString(";" + esc(name) + "=" + esc(scalar(e)))
				}
				return b.String()
			}
		case map[string]any:
			if explode {
				return ";" + joined(x, ";", true, esc)
			}
		}
		return ";" + esc(name) + "=" + joined(v, ",", false, esc)
	}
	return joined(v, ",", explode, esc)
}

// addQuery adds a query parameter in its style: form (the default),
// spaceDelimited, pipeDelimited or deepObject.
func addQuery(q url.Values, name string, v any, style string, explode bool) {
	switch x := v.(type) {
	case []any:
		if explode && (style == "" || style == "form") {
			for _, e := range x {
				q.Add(name, scalar(e))
			}
			return
		}
		sep := ","
		switch style {
		case "spaceDelimited":
			sep = " "
		case "pipeDelimited":
			sep = "|"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = scalar(e)
		}
		q.Add(name, strings.Join(parts, sep))
	case map[string]any:
		switch {
		case style == "deepObject":
			for _, k := range sortedObject(x) {
				q.Add(name+"["+k+"]", scalar(x[k]))
			}
		case explode:
			for _, k := range sortedObject(x) {
				q.Add(k, scalar(x[k]))
			}
		default:
			sep := ","
			switch style {
			case "spaceDelimited":
				sep = " "
			case "pipeDelimited":
				sep = "|"
			}
			q.Add(name, joined(x, sep, false, nil))
		}
	default:
		q.Add(name, scalar(v))
	}
}

// encodeBody encodes the body value raw in the body's media type: JSON
// as given; a form or multipart body from an object's properties (arrays
// repeated, objects as JSON); text and bytes from a string.
func encodeBody(b *body, raw json.RawMessage) ([]byte, string, error) {
	mt := strings.ToLower(strings.TrimSpace(strings.Split(b.mediaType, ";")[0]))
	switch {
	case isJSON(mt):
		return raw, b.mediaType, nil
	case mt == "application/x-www-form-urlencoded", mt == "multipart/form-data":
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			return nil, "", fmt.Errorf("%w: %s: want an object for %s: %v", toolkit.ErrBadParameter, b.prop, mt, err)
		}
		if mt == "multipart/form-data" {
			return encodeMultipart(obj)
		}
		form := url.Values{}
		for _, k := range sortedObject(obj) {
			if arr, ok := obj[k].([]any); ok {
				for _, e := range arr {
					form.Add(k, scalar(e))
				}
				continue
			}
			form.Add(k, scalar(obj[k]))
		}
		return []byte(form.Encode()), "application/x-www-form-urlencoded", nil
	default:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return raw, b.mediaType, nil // not a string: sent as the JSON text
		}
		return []byte(s), b.mediaType, nil
	}
}

// encodeMultipart writes an object as multipart/form-data, one part per
// property (an array's elements as parts of the same name).
func encodeMultipart(obj map[string]any) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	write := func(k string, v any) error {
		switch v.(type) {
		case map[string]any, []any:
			h := make(map[string][]string)
			h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q`, k)}
			h["Content-Type"] = []string{"application/json"}
			pw, err := w.CreatePart(h)
			if err != nil {
				return err
			}
			return json.NewEncoder(pw).Encode(v)
		}
		return w.WriteField(k, scalar(v))
	}
	for _, k := range sortedObject(obj) {
		if arr, ok := obj[k].([]any); ok {
			for _, e := range arr {
				if err := write(k, e); err != nil {
					return nil, "", err
				}
			}
			continue
		}
		if err := write(k, obj[k]); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
