package adapter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/model"
)

// The options every adapter takes, as an adapter reads them. An
// application hands the same options to the adapter's New:
//
//	tools := openai.New(tk, adapter.WithFilter(f), adapter.WithDispatch(model.WithTimeout(30*time.Second)))
func ExampleNewConfig() {
	opts := []adapter.Option{
		adapter.WithFilter(model.Filter{Namespaces: []string{"builtin"}, ReadOnly: true}),
		adapter.WithDispatch(model.WithTimeout(30 * time.Second)),
		adapter.WithDispatch(model.WithRepair(true)),
		adapter.WithOnResult(func(_ context.Context, r model.Result) {
			fmt.Println("result of", r.Name)
		}),
	}
	c := adapter.NewConfig(opts...)
	fmt.Println("namespaces:", c.Filter.Namespaces, "read-only:", c.Filter.ReadOnly)
	fmt.Println("dispatch options:", len(c.Dispatch))
	c.OnResult(context.Background(), model.Result{Name: "get_weather"})
	// Output:
	// namespaces: [builtin] read-only: true
	// dispatch options: 2
	// result of get_weather
}
