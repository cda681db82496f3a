package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmkit/toolkit"
)

// MeterName is the name of the OpenTelemetry meter of the server's
// metrics (see WithMeterProvider).
const MeterName = toolkit.MeterName + "/mcp/mcpserver"

// MetricSessions is the name of the gauge of open client sessions (a
// Prometheus exporter writes toolkit_mcp_server_sessions).
const MetricSessions = "toolkit.mcp.server.sessions"

// Names of the metrics of the requests that reach a prompt or a resource
// (see WithMeterProvider). A Prometheus exporter writes them
// toolkit_mcp_server_requests_total and
// toolkit_mcp_server_request_duration_seconds.
const (
	MetricRequests        = "toolkit.mcp.server.requests"
	MetricRequestDuration = "toolkit.mcp.server.request.duration"
)

// MetricSessionsRefused is the name of the counter of the requests refused
// because they would open a session beyond a ceiling (WithMaxSessions,
// WithMaxSessionsPerPrincipal), by [AttrCeiling]. A Prometheus exporter
// writes toolkit_mcp_server_sessions_refused_total.
const MetricSessionsRefused = "toolkit.mcp.server.sessions.refused"

// AttrCeiling is the attribute of MetricSessionsRefused that names the
// ceiling reached: CeilingMaxSessions or CeilingMaxSessionsPerPrincipal.
const AttrCeiling = attribute.Key("toolkit.ceiling")

// Values of AttrCeiling.
const (
	CeilingMaxSessions             = "max_sessions"
	CeilingMaxSessionsPerPrincipal = "max_sessions_per_principal"
)

// AttrKind is the attribute of the request metrics that tells what the
// request reached: KindPrompt (prompts/get) or KindResource
// (resources/read). The other attributes are the toolkit's:
// toolkit.AttrNamespace, AttrItem and, on the counter,
// toolkit.AttrOutcome.
const AttrKind = attribute.Key("toolkit.kind")

// AttrItem is the attribute of the request metrics that names the item:
// the prompt's name, the resource's URI, or for a read through a resource
// template the template's URI template (never the URI read, so that
// clients cannot add series by inventing URIs).
const AttrItem = attribute.Key("toolkit.item")

// Values of AttrKind.
const (
	KindPrompt   = "prompt"
	KindResource = "resource"
)

// recordMetrics registers the server's instruments with mp and returns
// the function that unregisters them.
func (s *Server) recordMetrics(mp metric.MeterProvider) (func(), error) {
	meter := mp.Meter(MeterName)
	sessions, err := meter.Int64ObservableGauge(MetricSessions, metric.WithUnit("{session}"),
		metric.WithDescription("Client sessions open."))
	if err != nil {
		return nil, fmt.Errorf("%w: WithMeterProvider: %w", toolkit.ErrBadParameter, err)
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		n := int64(0)
		for range s.server.Sessions() {
			n++
		}
		o.ObserveInt64(sessions, n)
		return nil
	}, sessions)
	if err != nil {
		return nil, fmt.Errorf("%w: WithMeterProvider: %w", toolkit.ErrBadParameter, err)
	}
	rm, err := newRequestMetrics(meter)
	if err == nil {
		s.refusals, err = meter.Int64Counter(MetricSessionsRefused, metric.WithUnit("{request}"),
			metric.WithDescription("Requests refused because they would open a session beyond a ceiling, by ceiling."))
	}
	if err != nil {
		reg.Unregister()
		return nil, fmt.Errorf("%w: WithMeterProvider: %w", toolkit.ErrBadParameter, err)
	}
	s.server.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			a := s.requestAttrs(rm, method, req)
			if a == nil {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			rm.duration.Record(ctx, time.Since(start).Seconds(), a.record...)
			rm.requests.Add(ctx, 1, a.outcomes[requestOutcome(ctx, err)]...)
			return res, err
		}
	})
	return func() { reg.Unregister() }, nil
}

// Attribute sets of MetricSessionsRefused.
var (
	refusedTotal        = metric.WithAttributeSet(attribute.NewSet(AttrCeiling.String(CeilingMaxSessions)))
	refusedPerPrincipal = metric.WithAttributeSet(attribute.NewSet(AttrCeiling.String(CeilingMaxSessionsPerPrincipal)))
)

// countRefusedSession counts a request refused by a session ceiling.
func (s *Server) countRefusedSession(ctx context.Context, perPrincipal bool) {
	if s.refusals == nil {
		return
	}
	if perPrincipal {
		s.refusals.Add(ctx, 1, refusedPerPrincipal)
	} else {
		s.refusals.Add(ctx, 1, refusedTotal)
	}
}

// requestMetrics holds the instruments of prompts/get and resources/read.
type requestMetrics struct {
	requests metric.Int64Counter
	duration metric.Float64Histogram
	// attrs caches the attribute sets of each item requested: itemKey →
	// *itemAttrs. It holds one entry per item ever requested (requests
	// for names that reach no item are not recorded).
	attrs sync.Map
}

// itemKey identifies an item in the attribute cache.
type itemKey struct{ kind, ns, item string }

// itemAttrs are the attribute sets of one item's measurements, made once
// so that a measurement allocates nothing.
type itemAttrs struct {
	record   []metric.RecordOption
	outcomes map[string][]metric.AddOption
}

// requestOutcomes are the values of toolkit.AttrOutcome a request can end
// with.
var requestOutcomes = []string{toolkit.OutcomeOK, toolkit.OutcomeToolFailed, toolkit.OutcomeBadInput,
	toolkit.OutcomeUnavailable, toolkit.OutcomeNotFound, toolkit.OutcomeDepthExceeded,
	toolkit.OutcomeCanceled, toolkit.OutcomeTimeout, toolkit.OutcomeError}

func newRequestMetrics(meter metric.Meter) (*requestMetrics, error) {
	var m requestMetrics
	var err1, err2 error
	m.requests, err1 = meter.Int64Counter(MetricRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Prompt gets and resource reads, by kind, namespace, item and outcome."))
	m.duration, err2 = meter.Float64Histogram(MetricRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of prompt gets and resource reads, by kind, namespace and item."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return &m, nil
}

// attrsOf returns the attribute sets of one item.
func (m *requestMetrics) attrsOf(kind, ns, item string) *itemAttrs {
	k := itemKey{kind, ns, item}
	if a, ok := m.attrs.Load(k); ok {
		return a.(*itemAttrs)
	}
	base := []attribute.KeyValue{AttrKind.String(kind), toolkit.AttrNamespace.String(ns), AttrItem.String(item)}
	a := &itemAttrs{
		record:   []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(base...))},
		outcomes: make(map[string][]metric.AddOption, len(requestOutcomes)),
	}
	for _, o := range requestOutcomes {
		a.outcomes[o] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(append(base[:3:3], toolkit.AttrOutcome.String(o))...))}
	}
	v, _ := m.attrs.LoadOrStore(k, a)
	return v.(*itemAttrs)
}

// requestAttrs returns the attribute sets of the item a prompts/get or
// resources/read request reaches, or nil for any other request and for a
// name or URI that reaches no item.
func (s *Server) requestAttrs(m *requestMetrics, method string, req sdk.Request) *itemAttrs {
	switch r := req.(type) {
	case *sdk.GetPromptRequest:
		if method != "prompts/get" || r.Params == nil {
			return nil
		}
		s.mu.Lock()
		reg, ok := s.regs[toolkit.KindPrompt][r.Params.Name]
		s.mu.Unlock()
		// Namespaces have no '.': a prompt's key is "namespace.name".
		ns, name, found := strings.Cut(reg.key, ".")
		if !ok || !found {
			return nil
		}
		return m.attrsOf(KindPrompt, ns, name)
	case *sdk.ReadResourceRequest:
		if method != "resources/read" || r.Params == nil {
			return nil
		}
		s.mu.Lock()
		reg, ok := s.regs[toolkit.KindResource][r.Params.URI]
		routes := s.tmplRoutes
		s.mu.Unlock()
		if ok {
			// Namespaces have no '#': a resource's key is "uri#namespace".
			i := strings.LastIndexByte(reg.key, '#')
			return m.attrsOf(KindResource, reg.key[i+1:], reg.key[:i])
		}
		if route, _, ok := routeOf(routes, r.Params.URI); ok {
			return m.attrsOf(KindResource, route.ns, route.tmpl.String())
		}
	}
	return nil
}

// requestOutcome classifies the end of a request as a value of
// toolkit.AttrOutcome: the JSON-RPC error code the client gets, or the
// toolkit's error.
func requestOutcome(ctx context.Context, err error) string {
	if err == nil {
		return toolkit.OutcomeOK
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we != nil {
		switch we.Code {
		case jsonrpc.CodeInvalidParams:
			return toolkit.OutcomeBadInput
		case sdk.CodeResourceNotFound:
			return toolkit.OutcomeNotFound
		case CodeTooManyCalls:
			return toolkit.OutcomeUnavailable
		}
		if ctx.Err() == nil {
			return toolkit.OutcomeError
		}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", err, cerr)
	}
	return toolkit.Outcome(err)
}
