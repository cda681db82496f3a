// Package openapi serves the operations of an OpenAPI document as tools:
// a [Connector] is a toolkit.Connector, which a delegate returns from
// CreateConnector (see [New] and its example).
//
//	c, err := openapi.New(openapi.Config{
//		Document:    "https://api.example.com/openapi.json", // or a file
//		Include:     openapi.Selection{Tags: []string{"pets"}},
//		Credentials: map[string]openapi.Credential{"api_key": {APIKey: key}},
//	}, onEvent)
//
// The document (OpenAPI 3.0 or 3.1, JSON or YAML) is parsed and resolved
// by github.com/getkin/kin-openapi, which also validates each request
// against it before it is sent (openapi3filter).
//
// # Tools
//
// One tool per operation that [Config.Include] and [Config.Exclude] keep
// ([Selection]: tags, path globs, operationId globs). Its name is
// [ToolName]: the operationId, else the method and path, made model-safe
// (letters, digits, '_' and '-', at most 64) and stable; operations whose
// names collide take a hash of their method and path. The description
// joins summary and description; the hints follow the method (GET, HEAD
// and OPTIONS read-only, DELETE destructive and idempotent, PUT
// idempotent; every operation open-world).
//
// The input schema is an object: one property per parameter (path,
// query, header, cookie; "<in>_<name>" when two locations share a name)
// and the request body under "body". The output schema is the first 2xx
// response's JSON schema when it describes an object (MCP's structured
// content is one). Schemas are converted to JSON Schema 2020-12 (3.0's
// nullable and boolean exclusive bounds rewritten), the components they
// use becoming "$defs", so a recursive component stays a reference; they
// describe components a few references deep and accept anything farther
// (the request is still validated against the whole document).
//
// # Calls
//
// Run builds the request (parameters serialized in their style: simple,
// label, matrix, form, space- and pipe-delimited, deepObject; JSON, form
// and multipart bodies), validates it ([ErrInvalidRequest], wrapping
// toolkit.ErrBadParameter: nothing is sent), adds the credentials of the
// first security requirement [Credential] satisfies (API key in a header,
// the query or a cookie; bearer; basic; OAuth 2 client credentials at the
// scheme's token URL, or any oauth2.TokenSource), and returns JSON as
// structured content, text as text, at most [Limits].MaxResponseBytes.
// An error status is a tool error (toolkit.ErrToolFailed) with the
// status and the API's message.
//
// # Hostile documents
//
// A document is bounded ([Limits]: bytes, operations, schema bytes), may
// not refer outside itself, and its servers may not be loopback, private
// or link-local addresses unless [Config.Allow] or BaseURL names them
// ([ErrDestinationRefused], checked again on the address each connection
// is made to). A refused document fails its connector alone with the
// reason ([ErrDocument]); an operation that cannot be made into a tool is
// skipped with a log line, never hiding the others. [Connector.Reload]
// reads the document again and reports a changed tool list.
//
// The guide docs/openapi.md tells the long story, with the gateway's
// openapi entries.
package openapi
