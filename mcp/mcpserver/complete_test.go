package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestGatewayCompletion checks that a gateway answers a client's
// completion/complete for an upstream prompt's argument and an upstream
// template's variable with what the upstream server answers, asked under
// the upstream's own prompt name and URI template, with the client's
// context arguments; that an upstream error answer reaches the client with
// its code; and that an answer longer than the protocol allows is cut.
func TestGatewayCompletion(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var got []*sdk.CompleteParams
	complete := func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		mu.Lock()
		got = append(got, req.Params)
		mu.Unlock()
		switch req.Params.Argument.Value {
		case "bad":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such value"}
		case "many":
			values := make([]string, 150)
			for i := range values {
				values[i] = fmt.Sprint("v", i)
			}
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values}}, nil
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{
			Values:  []string{req.Params.Ref.Type + " " + req.Params.Argument.Name + " " + req.Params.Argument.Value},
			Total:   9,
			HasMore: true,
		}}, nil
	}
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{CompletionHandler: complete}})
	const upTemplate = "test://items/{kind}/{id}"
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: upTemplate, Name: "items"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return nil, errors.New("unused")
		})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	gw, ctx := newGateway(t, m, nil, nil)

	// The names the gateway exposes the upstream's prompt and template under.
	prompts, err := gw.ListPrompts(ctx, nil)
	mustNotErr(t, err)
	var promptName string
	for _, p := range prompts.Prompts {
		if p.Name == "greet" || p.Name == "up.greet" || p.Name == "up_greet" {
			promptName = p.Name
		}
	}
	tmpls, err := gw.ListResourceTemplates(ctx, nil)
	mustNotErr(t, err)
	if promptName == "" || len(tmpls.ResourceTemplates) != 1 {
		t.Fatalf("prompts %s, templates %s", jsonOf(t, prompts.Prompts), jsonOf(t, tmpls.ResourceTemplates))
	}
	exposedTemplate := tmpls.ResourceTemplates[0].URITemplate

	res, err := gw.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: promptName},
		Argument: sdk.CompleteParamsArgument{Name: "style", Value: "fo"},
		Context:  &sdk.CompleteContext{Arguments: map[string]string{"name": "Ann"}},
	})
	mustNotErr(t, err)
	if c := res.Completion; !slices.Equal(c.Values, []string{"ref/prompt style fo"}) || c.Total != 9 || !c.HasMore {
		t.Errorf("prompt completion %+v", c)
	}
	res, err = gw.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: exposedTemplate},
		Argument: sdk.CompleteParamsArgument{Name: "id", Value: "4"},
		Context:  &sdk.CompleteContext{Arguments: map[string]string{"kind": "book"}},
	})
	mustNotErr(t, err)
	if c := res.Completion; !slices.Equal(c.Values, []string{"ref/resource id 4"}) || c.Total != 9 || !c.HasMore {
		t.Errorf("template completion %+v", c)
	}
	mu.Lock()
	reqs := slices.Clone(got)
	mu.Unlock()
	if len(reqs) != 2 {
		t.Fatalf("upstream got %d requests, want 2", len(reqs))
	}
	if p := reqs[0]; p.Ref.Name != "greet" || p.Context == nil || p.Context.Arguments["name"] != "Ann" {
		t.Errorf("upstream prompt request %s", jsonOf(t, p))
	}
	if p := reqs[1]; p.Ref.URI != upTemplate || p.Argument.Name != "id" || p.Context == nil || p.Context.Arguments["kind"] != "book" {
		t.Errorf("upstream template request %s", jsonOf(t, p))
	}

	// The upstream's error answer, with its code.
	_, err = gw.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: promptName},
		Argument: sdk.CompleteParamsArgument{Name: "style", Value: "bad"},
	})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || we.Message != "no such value" {
		t.Errorf("error answer: %v", err)
	}

	// At most 100 values go to the client.
	res, err = gw.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: exposedTemplate},
		Argument: sdk.CompleteParamsArgument{Name: "id", Value: "many"},
	})
	mustNotErr(t, err)
	if c := res.Completion; len(c.Values) != 100 || c.Values[99] != "v99" || !c.HasMore || c.Total != 150 {
		t.Errorf("long completion: %d values, hasMore %v, total %d", len(c.Values), c.HasMore, c.Total)
	}

	// An unknown prompt is an invalid parameter, as its server would say,
	// without asking upstream.
	_, err = gw.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "nowhere"},
		Argument: sdk.CompleteParamsArgument{Name: "style", Value: "x"},
	})
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || we.Message != `unknown prompt "nowhere"` {
		t.Errorf("completion of an unknown prompt: %v", err)
	}

	// A reference to nothing the gateway exposes completes to nothing,
	// without asking upstream.
	res, err = gw.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: "test://other/{id}"},
		Argument: sdk.CompleteParamsArgument{Name: "id", Value: "4"},
	})
	if err != nil || len(res.Completion.Values) != 0 {
		t.Errorf("completion of an unknown template: %+v, %v", res, err)
	}
	mu.Lock()
	n := len(got)
	mu.Unlock()
	if n != 4 {
		t.Errorf("upstream got %d requests, want 4", n)
	}
}
