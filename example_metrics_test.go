package toolkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"go.opentelemetry.io/otel"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// Metrics go to any OpenTelemetry meter provider. Here it is the global
// one, which a program sets once with otel.SetMeterProvider (the
// OpenTelemetry SDK's, with the exporter it uses: Prometheus, OTLP, ...);
// until then it records nothing. Each call adds one to the series of
// toolkit.MetricToolCalls of its namespace, tool and outcome, the outcome
// being what toolkit.Outcome makes of the call's error.
func ExampleWithMeterProvider() {
	tk, err := toolkit.New(
		toolkit.WithTool(tool.Must("add", "Adds two integers.", add)),
		toolkit.WithMeterProvider(otel.GetMeterProvider()),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, input := range []string{`{"a": 1, "b": 2}`, `{"a": "one"}`} {
		_, err := tk.Call(ctx, "add", resource.Must("input", json.RawMessage(input)))
		fmt.Printf("%s %s=%s %s=%s\n", toolkit.MetricToolCalls, toolkit.AttrTool, "add", toolkit.AttrOutcome, toolkit.Outcome(err))
	}
	// Output:
	// toolkit.tool.calls toolkit.tool=add toolkit.outcome=ok
	// toolkit.tool.calls toolkit.tool=add toolkit.outcome=bad_input
}
