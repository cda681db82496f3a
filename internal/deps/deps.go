//go:build tools

// Package deps pins the module's dependencies while the packages that use
// them are being written.
package deps

import (
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/propagation"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.opentelemetry.io/otel/sdk/trace/tracetest"
	_ "go.uber.org/goleak"
	_ "golang.org/x/text/encoding/charmap"
	_ "golang.org/x/text/encoding/unicode"
	_ "gopkg.in/yaml.v3"
)
