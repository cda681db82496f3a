package bridge_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// cityPrompt is a prompt whose "city" argument completes from a list.
type cityPrompt struct{}

func (cityPrompt) Name() string        { return "weather" }
func (cityPrompt) Title() string       { return "Weather report" }
func (cityPrompt) Description() string { return "Writes a weather report for a city" }
func (cityPrompt) InputSchema() (*jsonschema.Schema, error) {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}}}, nil
}

// Complete suggests the known cities that start with value.
func (cityPrompt) Complete(_ context.Context, arg, value string, _ map[string]string) (*sdk.CompletionResultDetails, error) {
	res := &sdk.CompletionResultDetails{Values: []string{}}
	if arg != "city" {
		return res, nil
	}
	for _, c := range []string{"Paris", "Parma", "Porto", "Prague"} {
		if strings.HasPrefix(c, value) {
			res.Values = append(res.Values, c)
		}
	}
	res.Total = len(res.Values)
	return res, nil
}

var _ bridge.Completer = cityPrompt{}

// A prompt that implements Completer completes its arguments for the
// clients of a toolkit served over MCP. The prompts and templates of a
// remote MCP server do so by asking their server.
func ExampleCompleter() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tk, err := toolkit.New(toolkit.WithPrompt(cityPrompt{}))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	clientT, serverT := sdk.NewInMemoryTransports()
	go srv.Run(ctx, serverT)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "weather"},
		Argument: sdk.CompleteParamsArgument{Name: "city", Value: "Par"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Completion.Values)
	// Output: [Paris Parma]
}
