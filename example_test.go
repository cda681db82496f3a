package toolkit_test

import (
	"context"
	"encoding/json"
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

	out, err := tk.Call(ctx, "add", resource.Must("input", json.RawMessage(`{"a": 2, "b": 3}`)))
	if err != nil {
		log.Fatal(err)
	}
	data, _ := out.Read(ctx)
	fmt.Println(out.Type(), string(data))

	_, err = tk.Call(ctx, "add", resource.Must("input", json.RawMessage(`{"a": "two"}`)))
	fmt.Println(err != nil)
	// Output:
	// application/json {"sum":5}
	// true
}
