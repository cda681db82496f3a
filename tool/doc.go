// Package tool defines the Tool contract of the toolkit and helpers to
// build tools: Base for boilerplate, typed tools from Go functions, and the
// structured-output tool.
//
// A typed tool is a Go function from an input type to an output type. New
// infers the input and output JSON Schemas from the two types (the json
// tags name the fields, the jsonschema tags describe them), and the tool's
// Run decodes its JSON input into the input type, refusing unknown fields:
//
//	type weatherIn struct {
//		City string `json:"city" jsonschema:"the city to report on"`
//	}
//	type weatherOut struct {
//		TempC float64 `json:"temp_c"`
//	}
//
//	weather, err := tool.New("weather", "Reports the weather in a city.",
//		func(ctx context.Context, in weatherIn) (weatherOut, error) {
//			return weatherOut{TempC: 21.5}, nil
//		},
//		tool.WithReadOnly(true))
//
// Give it to a toolkit and call it with Go values; the toolkit checks the
// input against the schema, runs the function and returns its output as
// JSON:
//
//	tk, err := toolkit.New(toolkit.WithTool(weather))
//	out, err := tk.Call(ctx, "weather", toolkit.Input(weatherIn{City: "Oslo"}))
//	data, err := out.Read(ctx) // {"temp_c":21.5}
//
// Must is New for package-level variables and tests. A tool of any other
// shape implements [Tool] itself, embedding [Base] for the methods it has
// no use for. [NewOutputTool] makes the tool through which a model submits
// a structured final answer ([OutputToolName]).
package tool
