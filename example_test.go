package toolkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func add(_ context.Context, in addIn) (addOut, error) { return addOut{Sum: in.A + in.B}, nil }

// A Go function as a tool, called with Go values.
func Example() {
	add := func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }
	tk, err := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two integers.", add)))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	out, err := tk.Call(ctx, "add", toolkit.Input(addIn{A: 2, B: 3}))
	if err != nil {
		log.Fatal(err)
	}
	data, _ := out.Read(ctx)
	fmt.Println(string(data))
	// Output:
	// 5
}

func ExampleNew() {
	tk, err := toolkit.New(
		toolkit.WithTool(tool.Must("add", "Adds two integers.", add)),
		toolkit.WithResource(resource.WithURI("file:///etc/motd", resource.Must("motd", "Welcome!"))),
	)
	if err != nil {
		log.Fatal(err)
	}
	resp, _ := tk.List(context.Background(), toolkit.ListRequest{})
	for _, it := range resp.Items {
		fmt.Println(it.Type, it.Key())
	}
	// Output:
	// tool builtin.add
	// resource file:///etc/motd#builtin
}

func ExampleToolkit_Lookup() {
	tk, _ := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two integers.", add)))
	ctx := context.Background()
	for _, key := range []string{"add", "builtin.add", "other.add", "bad key"} {
		v, err := tk.Lookup(ctx, key)
		switch v := v.(type) {
		case toolkit.Tool:
			fmt.Printf("%s: tool %s\n", key, v.Name())
		default:
			fmt.Printf("%s: %v\n", key, err)
		}
	}
	// Output:
	// add: tool add
	// builtin.add: tool add
	// other.add: not found: no tool, prompt or resource named "other.add"
	// bad key: bad parameter: lookup key "bad key": want name, namespace.name, uri or uri#namespace
}

func ExampleToolkit_List() {
	tk, _ := toolkit.New(toolkit.WithTool(
		tool.Must("add", "Adds two integers.", add),
		tool.Must("sub", "Subtracts.", add),
		tool.Must("mul", "Multiplies.", add),
	))
	limit := uint(2)
	resp, _ := tk.List(context.Background(), toolkit.ListRequest{Type: toolkit.ListTypeTools, Offset: 1, Limit: &limit})
	fmt.Println("matched:", resp.Count)
	for _, t := range resp.Tools {
		fmt.Println(t.Name())
	}
	// Output:
	// matched: 3
	// mul
	// sub
}

func ExampleToolkit_Call() {
	tk, _ := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two integers.", add)))
	ctx := context.Background()

	out, err := tk.Call(ctx, "add", toolkit.Input(map[string]any{"a": 2, "b": 3}))
	if err != nil {
		log.Fatal(err)
	}
	data, _ := out.Read(ctx)
	fmt.Println(out.Type(), string(data))

	// JSON text works as well; the input is checked against the schema.
	_, err = tk.Call(ctx, "add", toolkit.Input(json.RawMessage(`{"a": "two"}`)))
	fmt.Println(errors.Is(err, toolkit.ErrSchema))
	// Output:
	// application/json {"sum":5}
	// true
}

func ExampleInput() {
	tk, _ := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two integers.", add)))
	ctx := context.Background()

	// Any value encoding/json marshals: a map, or the tool's own input type.
	for _, in := range []any{map[string]any{"a": 2, "b": 3}, addIn{A: 40, B: 2}} {
		out, err := tk.Call(ctx, "add", toolkit.Input(in))
		if err != nil {
			log.Fatal(err)
		}
		data, _ := out.Read(ctx)
		fmt.Println(string(data))
	}

	// A value that has no JSON form fails the call, before the tool runs.
	_, err := tk.Call(ctx, "add", toolkit.Input(map[string]any{"a": make(chan int)}))
	fmt.Println(err)
	// Output:
	// {"sum":5}
	// {"sum":42}
	// bad parameter: tool "add": reading input: bad parameter: resource "input": json: unsupported type: chan int
}
