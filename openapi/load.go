package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/llmkit/toolkit"
)

// documentURL returns doc when it is an http or https URL, else "".
func documentURL(doc string) string {
	if strings.HasPrefix(doc, "http://") || strings.HasPrefix(doc, "https://") {
		return doc
	}
	return ""
}

// read returns the document's bytes, at most Limits.MaxDocumentBytes, and
// the URL its relative server URLs are resolved against (nil for a file).
func (c *Connector) read(ctx context.Context) ([]byte, *url.URL, error) {
	max := c.limits.MaxDocumentBytes
	if u := documentURL(c.cfg.Document); u != "" {
		base, err := url.Parse(u)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", toolkit.ErrBadParameter, err)
		}
		ctx, cancel := context.WithTimeout(ctx, c.limits.CallTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", toolkit.ErrBadParameter, err)
		}
		req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
		resp, err := c.client.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: openapi: fetching the document: %w", toolkit.ErrUnavailable, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, nil, fmt.Errorf("%w: openapi: fetching the document: %s", toolkit.ErrUnavailable, resp.Status)
		}
		data, err := readBounded(resp.Body, max)
		if err != nil {
			return nil, nil, err
		}
		return data, base, nil
	}
	f, err := os.Open(c.cfg.Document)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: openapi: %w", toolkit.ErrUnavailable, err)
	}
	defer f.Close()
	data, err := readBounded(f, max)
	return data, nil, err
}

// readBounded reads r to its end, refusing more than max bytes.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%w: openapi: reading the document: %w", toolkit.ErrUnavailable, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrDocument, max)
	}
	return data, nil
}

// methods are the HTTP methods of a path item's operations, in the order
// tools are made.
var methods = []string{
	http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete,
	http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace,
}

// parse parses and resolves data as an OpenAPI 3.0 or 3.1 document, with
// no reference outside it.
func parse(ctx context.Context, data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	doc, err := loadData(loader, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDocument, err)
	}
	if doc.Info == nil {
		return nil, fmt.Errorf("%w: no info", ErrDocument)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") && !strings.HasPrefix(doc.OpenAPI, "3.1") {
		return nil, fmt.Errorf("%w: openapi version %q: want 3.0 or 3.1", ErrDocument, trim(doc.OpenAPI, 20))
	}
	return doc, nil
}

// loadData runs the loader on data, turning a panic of the parser into an
// error: a hostile document fails alone.
func loadData(loader *openapi3.Loader, data []byte) (doc *openapi3.T, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("the parser failed: %v", r)
		}
	}()
	// A JSON document is decoded as JSON: the loader would read it as YAML
	// first, several times slower on a large one.
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		doc := &openapi3.T{}
		if json.Unmarshal(data, doc) == nil {
			if err := loader.ResolveRefsIn(doc, nil); err != nil {
				return nil, err
			}
			return doc, nil
		}
	}
	return loader.LoadFromData(data)
}

// countOperations returns the document's operations, stopping past max.
func countOperations(doc *openapi3.T, max int) int {
	n := 0
	if doc.Paths == nil {
		return 0
	}
	for _, item := range doc.Paths.Map() {
		if item == nil {
			continue
		}
		n += len(item.Operations())
		if n > max {
			return n
		}
	}
	return n
}

// api is one load of the document: its tools and what their calls need.
type api struct {
	doc          *openapi3.T
	title        string
	version      string
	instructions string
	server       *url.URL // where the paths are appended
	tools        []*operationTool
	digests      [][32]byte // of the tools' definitions, in order
	schemas      *schemaSet
}

// build parses data and makes the tools of the selected operations.
func (c *Connector) build(ctx context.Context, data []byte, docURL *url.URL) (*api, error) {
	doc, err := parse(ctx, data)
	if err != nil {
		return nil, err
	}
	if n := countOperations(doc, c.limits.MaxOperations); n > c.limits.MaxOperations {
		return nil, fmt.Errorf("%w: more than %d operations", ErrDocument, c.limits.MaxOperations)
	}
	server, err := c.serverURL(doc, docURL)
	if err != nil {
		return nil, err
	}
	if err := c.creds.checkUsers(doc); err != nil {
		return nil, err
	}
	a := &api{
		doc:          doc,
		title:        trim(doc.Info.Title, maxTitle),
		version:      trim(doc.Info.Version, maxTitle),
		instructions: trim(doc.Info.Description, maxDescription),
		server:       server,
		schemas:      newSchemaSet(doc, c.limits.MaxSchemaBytes),
	}
	ops := c.selected(doc)
	names := newNamer()
	for _, op := range ops {
		names.reserve(op)
	}
	for _, op := range ops {
		t, err := newOperationTool(c, a, op, names.name(op))
		if err != nil {
			c.logger.Warn("openapi: operation skipped", "document", c.cfg.Document, "method", op.method, "path", trim(op.path, maxTitle), "reason", err)
			continue
		}
		a.tools = append(a.tools, t)
		a.digests = append(a.digests, t.digest())
	}
	// The paths not selected are dropped, so that a large document keeps
	// in memory only what its tools use.
	keep := map[string]bool{}
	for _, op := range ops {
		keep[op.path] = true
	}
	for _, p := range doc.Paths.Keys() {
		if !keep[p] {
			doc.Paths.Delete(p)
		}
	}
	doc.Webhooks = nil
	// The tools hold their schemas, and the operations their resolved
	// parts: the components are no longer looked up, but for the security
	// schemes.
	if doc.Components != nil {
		doc.Components = &openapi3.Components{SecuritySchemes: doc.Components.SecuritySchemes}
	}
	a.schemas = nil
	return a, nil
}

// operation is one operation of the document.
type operation struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

// operations returns the document's operations ordered by path, then
// method.
func operations(doc *openapi3.T) []operation {
	if doc.Paths == nil {
		return nil
	}
	paths := doc.Paths.Keys()
	slices.Sort(paths)
	var out []operation
	for _, p := range paths {
		item := doc.Paths.Value(p)
		if item == nil {
			continue
		}
		for _, m := range methods {
			if op := item.GetOperation(m); op != nil {
				out = append(out, operation{method: m, path: p, item: item, op: op})
			}
		}
	}
	return out
}

// serverURL returns the URL the operations' paths are appended to:
// BaseURL, else the document's first server with its variables' defaults,
// resolved against the document's URL. A server that is not http or
// https, or that the destination rules refuse, is an error.
func (c *Connector) serverURL(doc *openapi3.T, docURL *url.URL) (*url.URL, error) {
	raw := c.cfg.BaseURL
	if raw == "" {
		if len(doc.Servers) == 0 || doc.Servers[0] == nil {
			if docURL == nil {
				return nil, fmt.Errorf("%w: no servers and no base URL", ErrDocument)
			}
			raw = "/"
		} else {
			s := doc.Servers[0]
			raw = s.URL
			for name, v := range s.Variables {
				if v != nil {
					raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
				}
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: server URL: %v", ErrDocument, errors.Unwrap(err))
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: server URL %q: want http or https", ErrDocument, trim(raw, maxTitle))
	}
	if !u.IsAbs() || u.Host == "" {
		if docURL == nil {
			return nil, fmt.Errorf("%w: server URL %q is relative, and the document is a file: give a base URL", ErrDocument, trim(raw, maxTitle))
		}
		u = docURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: server URL %q: want http or https", ErrDocument, trim(raw, maxTitle))
	}
	if err := c.checkDestination(u); err != nil {
		return nil, fmt.Errorf("%w: server: %w", ErrDocument, err)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Bounds of the texts taken from the document.
const (
	maxTitle       = 200
	maxDescription = 8 << 10
)

// trim cuts s to at most n bytes, on a rune boundary.
func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// isRuneStart reports whether b starts a UTF-8 sequence.
func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// digestOf returns the SHA-256 of b.
func digestOf(b []byte) [32]byte { return sha256.Sum256(b) }
