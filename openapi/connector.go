package openapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/llmkit/toolkit"
)

// Config says where a connector's document is, where its calls go and
// with which credentials, and which operations become tools.
type Config struct {
	// Document is the OpenAPI document (3.0 or 3.1, JSON or YAML): an
	// http or https URL, or a file path. It is read in full, at most
	// Limits.MaxDocumentBytes, and refers to nothing outside itself
	// ($refs to other files or URLs are refused).
	Document string
	// BaseURL, when set, replaces the document's servers as the URL the
	// operations' paths are appended to. It is the operator's choice, so
	// its origin is allowed even when it is loopback or private.
	BaseURL string
	// Include keeps only the operations it matches (all when it is
	// empty); Exclude then drops those it matches.
	Include, Exclude Selection
	// Credentials are the secrets of the document's security schemes, by
	// scheme name (the key under components.securitySchemes).
	Credentials map[string]Credential
	// Headers are sent with every call, before the credentials: for an
	// API whose document declares no security scheme (GitHub's), an
	// Authorization header here.
	Headers map[string]string
	// Allow names the destinations (origins such as
	// "http://127.0.0.1:4010", or host names and addresses such as
	// "localhost", "10.1.2.3") that calls and the document's download may
	// reach although they are not public. Without it a document whose
	// servers point at a loopback, private, link-local or otherwise not
	// public address is refused; BaseURL's origin and Document's are
	// always allowed.
	Allow []string
	// Limits bound what is read and kept; zero fields take the defaults.
	Limits Limits
	// HTTPClient sends the calls and fetches the document (default: a
	// client of its own). Its transport is wrapped by the destination
	// check.
	HTTPClient *http.Client
	// Logger receives the operations skipped and why (default
	// slog.Default()).
	Logger *slog.Logger
}

// Limits bound a connector's document, tools and calls. A zero field
// takes its default.
type Limits struct {
	// MaxDocumentBytes bounds the document (default 64 MiB).
	MaxDocumentBytes int64
	// MaxOperations refuses a document with more operations (default
	// 10,000), before any tool is built.
	MaxOperations int
	// MaxSchemaBytes bounds one tool's input or output schema as JSON,
	// with the components it refers to (default 1 MiB). A tool whose
	// input schema is larger is skipped; an output schema that is larger
	// is dropped.
	MaxSchemaBytes int
	// MaxResponseBytes bounds the body of a response read (default 1 MiB):
	// a larger JSON body fails the call, a larger text is cut.
	MaxResponseBytes int64
	// CallTimeout bounds one call, and the download of the document
	// (default 60s).
	CallTimeout time.Duration
}

// Defaults of Limits.
const (
	DefaultMaxDocumentBytes = 64 << 20
	DefaultMaxOperations    = 10_000
	DefaultMaxSchemaBytes   = 1 << 20
	DefaultMaxResponseBytes = 1 << 20
	DefaultCallTimeout      = 60 * time.Second
)

// withDefaults returns l with its zero fields set to the defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxDocumentBytes <= 0 {
		l.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	if l.MaxOperations <= 0 {
		l.MaxOperations = DefaultMaxOperations
	}
	if l.MaxSchemaBytes <= 0 {
		l.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.CallTimeout <= 0 {
		l.CallTimeout = DefaultCallTimeout
	}
	return l
}

// Connector serves the operations of one OpenAPI document as tools. It is
// a toolkit.Connector: a delegate returns it from CreateConnector.
type Connector struct {
	cfg     Config
	limits  Limits
	logger  *slog.Logger
	onEvent func(toolkit.ConnectorEvent)
	client  *http.Client
	creds   *credentials

	reloadMu sync.Mutex // one load at a time
	mu       sync.Mutex
	api      *api // the document in force; nil before the first load
}

var _ toolkit.Connector = (*Connector)(nil)

// New returns a connector for cfg; nothing is read before Run. onEvent
// receives the connector's events (the callback the toolkit hands to
// CreateConnector); it may be nil. A configuration that cannot work (no
// document, a bad base URL, an allowed destination that is not one, a
// credential without a secret) gives an error wrapping
// toolkit.ErrBadParameter.
func New(cfg Config, onEvent func(toolkit.ConnectorEvent)) (*Connector, error) {
	if cfg.Document == "" {
		return nil, fmt.Errorf("%w: openapi: no document", toolkit.ErrBadParameter)
	}
	allow, err := newAllowList(cfg.Allow, cfg.BaseURL, documentURL(cfg.Document))
	if err != nil {
		return nil, err
	}
	if onEvent == nil {
		onEvent = func(toolkit.ConnectorEvent) {}
	}
	c := &Connector{cfg: cfg, limits: cfg.Limits.withDefaults(), logger: cfg.Logger, onEvent: onEvent}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.client = guardedClient(cfg.HTTPClient, allow)
	if c.creds, err = newCredentials(cfg.Credentials, c.client); err != nil {
		return nil, err
	}
	return c, nil
}

// Run loads the document, reports the connector ready with its tools,
// and waits until ctx is done. A document that cannot be read or is
// refused reports StatusFailed with the reason and returns the error (the
// toolkit runs the connector again later).
func (c *Connector) Run(ctx context.Context) error {
	if err := c.Reload(ctx); err != nil {
		c.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusFailed, LastError: err.Error()}))
		return err
	}
	c.mu.Lock()
	a := c.api
	c.mu.Unlock()
	c.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{
		Name:           a.title,
		Version:        a.version,
		Title:          a.title,
		Instructions:   a.instructions,
		Status:         toolkit.StatusReady,
		ConnectedSince: time.Now(),
	}))
	<-ctx.Done()
	return nil
}

// Reload reads the document again and, when the tools it gives differ
// from those served, serves the new ones and reports that the tool list
// changed. A document that fails leaves the tools served as they were.
func (c *Connector) Reload(ctx context.Context) error {
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	data, base, err := c.read(ctx)
	if err != nil {
		return err
	}
	a, err := c.build(ctx, data, base)
	if err != nil {
		return err
	}
	c.mu.Lock()
	old := c.api
	c.api = a
	c.mu.Unlock()
	if old != nil && !slices.Equal(old.digests, a.digests) {
		c.onEvent(toolkit.ToolListChangeEvent())
	}
	return nil
}

// ListTools returns one tool per selected operation of the document
// (none before it is loaded).
func (c *Connector) ListTools(context.Context) ([]toolkit.Tool, error) {
	c.mu.Lock()
	a := c.api
	c.mu.Unlock()
	if a == nil {
		return nil, nil
	}
	out := make([]toolkit.Tool, len(a.tools))
	for i, t := range a.tools {
		out[i] = t
	}
	return out, nil
}

// ListPrompts returns no prompts: a document describes none.
func (c *Connector) ListPrompts(context.Context) ([]toolkit.Prompt, error) { return nil, nil }

// ListResources returns no resources: a document describes none.
func (c *Connector) ListResources(context.Context) ([]toolkit.Resource, error) { return nil, nil }

// ErrDocument is wrapped by the error of a document that is refused: it
// cannot be parsed, is not OpenAPI 3.0 or 3.1, is larger than the limits
// allow, or names servers the connector may not reach.
var ErrDocument = errors.New("openapi: document refused")
