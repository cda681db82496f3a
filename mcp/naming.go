package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/names"
)

// A connector names itself in its logs (the "connector" attribute of every
// record) and its errors by its namespace: the one given with OptNamespace,
// else the one the toolkit runs it under (toolkit.ConnectorNamespace of
// Run's context), else, until it has one, its URL without query or user
// information. URLs and command lines may be long or hold secrets.

// OptNamespace names the connector in its logs and errors (see the package
// documentation). A toolkit passes the namespace it registers a connector
// under to Run ([toolkit.ConnectorNamespace]), so it is needed only for
// connectors run apart from a toolkit, or to name them differently. An
// invalid namespace makes New fail with [toolkit.ErrBadParameter].
func OptNamespace(ns string) Option {
	return func(o *options) error {
		if err := names.CheckNamespace(ns); err != nil {
			return fmt.Errorf("OptNamespace: %w", err)
		}
		o.namespace = ns
		return nil
	}
}

// naming is what a connector is called by: its namespace, once known,
// and the host part of the URIs of its results, from its server's name.
type naming struct {
	ns         atomic.Pointer[string]
	resultHost atomic.Pointer[string]
}

// label returns the name of the connector in logs and errors.
func (c *Connector) label() string {
	if p := c.names.ns.Load(); p != nil {
		return *p
	}
	return c.ep.display
}

// adoptNamespace takes the namespace the toolkit runs the connector under,
// unless OptNamespace chose one.
func (c *Connector) adoptNamespace(ctx context.Context) {
	if c.o.namespace != "" {
		return
	}
	if ns := toolkit.ConnectorNamespace(ctx); ns != "" {
		c.names.ns.Store(&ns)
	}
}

// namedHandler adds the connector's name to every record, as it is when
// the record is logged.
type namedHandler struct {
	h    slog.Handler
	name func() string
}

func (h *namedHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *namedHandler) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(slog.String("connector", h.name()))
	return h.h.Handle(ctx, r)
}

func (h *namedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &namedHandler{h: h.h.WithAttrs(as), name: h.name}
}

func (h *namedHandler) WithGroup(g string) slog.Handler {
	return &namedHandler{h: h.h.WithGroup(g), name: h.name}
}

// namedLogger returns a logger that names c in every record.
func (c *Connector) namedLogger(l *slog.Logger) *slog.Logger {
	return slog.New(&namedHandler{h: l.Handler(), name: c.label})
}
