package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oteltest"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// sessionGauge reads the sessions gauge, and whether it has its one
// point; the gauge must be the server meter's.
func sessionGauge(t *testing.T, mp *oteltest.MeterProvider) (int64, bool) {
	t.Helper()
	if in, ok := mp.Instrument(MetricSessions); !ok || in.Meter != MeterName || in.Kind != oteltest.Gauge {
		t.Fatalf("sessions instrument %+v (%v), want a gauge of meter %s", in, ok, MeterName)
	}
	if pts := mp.Points(MetricSessions); len(pts) == 1 {
		return pts[0].Value, true
	}
	return 0, false
}

func TestServerMetricsSessions(t *testing.T) {
	leakCheck(t)
	mp := oteltest.NewMeterProvider()
	f := newFixture(t, nil, WithMeterProvider(mp))
	if n, ok := sessionGauge(t, mp); !ok || n != 0 {
		t.Errorf("sessions before any client: %d (%v)", n, ok)
	}
	f.connect(t, nil)
	f.connect(t, nil)
	if n, ok := sessionGauge(t, mp); !ok || n != 2 {
		t.Errorf("sessions with two clients: %d (%v), want 2", n, ok)
	}
	f.srv.Close()
	if n, ok := sessionGauge(t, mp); ok {
		t.Errorf("a closed server still reports %d sessions", n)
	}
}

// requestPoints reads the request counter's points and the duration
// histogram's counts, by their attributes; both instruments must be the
// server meter's.
func requestPoints(t *testing.T, mp *oteltest.MeterProvider) (counts, durations map[string]int64) {
	t.Helper()
	for name, kind := range map[string]oteltest.Kind{MetricRequests: oteltest.Counter, MetricRequestDuration: oteltest.Histogram} {
		if in, ok := mp.Instrument(name); !ok || in.Meter != MeterName || in.Kind != kind {
			t.Fatalf("instrument %s: %+v (%v), want a %s of meter %s", name, in, ok, kind, MeterName)
		}
	}
	label := func(set attribute.Set) string {
		var parts []string
		for _, kv := range set.ToSlice() {
			parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
		}
		return strings.Join(parts, ",")
	}
	counts, durations = map[string]int64{}, map[string]int64{}
	for _, p := range mp.Points(MetricRequests) {
		counts[label(p.Attributes)] = p.Value
	}
	for _, p := range mp.Points(MetricRequestDuration) {
		durations[label(p.Attributes)] = int64(p.Count)
	}
	return counts, durations
}

// TestServerMetricsRequests checks the request metrics of prompts/get and
// resources/read: counts by kind, namespace, item and outcome, durations
// by kind, namespace and item, and nothing for names that reach no item.
func TestServerMetricsRequests(t *testing.T) {
	leakCheck(t)
	mp := oteltest.NewMeterProvider()
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"topic": {Type: "string"}}, Required: []string{"topic"}}
	p := &renderPrompt{testPrompt: testPrompt{name: "brief", schema: schema},
		render: func(_ context.Context, in json.RawMessage) (*prompt.Rendered, error) {
			if !strings.Contains(string(in), "topic") {
				return nil, fmt.Errorf("%w: topic is required", toolkit.ErrBadParameter)
			}
			return &prompt.Rendered{Messages: []prompt.Message{{Role: "user", Content: resource.Must("m", []byte("about it"))}}}, nil
		}}
	f := newFixture(t, []toolkit.Option{
		toolkit.WithPrompt(p),
		toolkit.WithResource(&staticResource{uri: "file:///a", name: "a", typ: "text/plain", data: []byte("a")}),
		toolkit.WithResourceTemplate(testTemplate(t, "items://item/{id}", "items")),
	}, WithMeterProvider(mp))
	cs := f.connect(t, nil)
	ctx := context.Background()
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brief", Arguments: map[string]string{"topic": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brief"}); err == nil {
		t.Fatal("a prompt without its argument rendered")
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "invented"}); err == nil {
		t.Fatal("an unknown prompt rendered")
	}
	for _, uri := range []string{"file:///a", "file:///a", "items://item/7", "items://item/8", "nowhere://x"} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if (err != nil) != (uri == "nowhere://x") {
			t.Fatalf("read %s: %v", uri, err)
		}
	}
	counts, durations := requestPoints(t, mp)
	const (
		prompt  = "toolkit.item=brief,toolkit.kind=prompt,toolkit.namespace=builtin"
		res     = "toolkit.item=file:///a,toolkit.kind=resource,toolkit.namespace=builtin"
		tmpl    = "toolkit.item=items://item/{id},toolkit.kind=resource,toolkit.namespace=builtin"
		outcome = ",toolkit.outcome="
	)
	wantCounts := map[string]int64{
		prompt + outcome + toolkit.OutcomeOK:       1,
		prompt + outcome + toolkit.OutcomeBadInput: 1,
		res + outcome + toolkit.OutcomeOK:          2,
		tmpl + outcome + toolkit.OutcomeOK:         2,
	}
	if !maps.Equal(counts, wantCounts) {
		t.Errorf("request counts\n got %v\nwant %v", counts, wantCounts)
	}
	if want := map[string]int64{prompt: 2, res: 2, tmpl: 2}; !maps.Equal(durations, want) {
		t.Errorf("request durations\n got %v\nwant %v", durations, want)
	}
}
