package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

var (
	_ bridge.Completer = (*remotePrompt)(nil)
	_ bridge.Completer = (*remoteTemplate)(nil)
)

// Complete asks the server for values of the prompt's argument arg that
// complete value (completion/complete); args holds the other arguments
// already chosen. A server that does not offer completions has none to
// give: the result is empty and no request is sent. See [bridge.Completer].
func (p *remotePrompt) Complete(ctx context.Context, arg, value string, args map[string]string) (*sdk.CompletionResultDetails, error) {
	return p.c.complete(ctx, reqName{"completion of prompt", p.def.Name}, &sdk.CompleteReference{Type: "ref/prompt", Name: p.def.Name}, arg, value, args)
}

// Complete asks the server for values of the template's variable arg that
// complete value (completion/complete); args holds the other variables
// already chosen. A server that does not offer completions has none to
// give: the result is empty and no request is sent. See [bridge.Completer].
func (t *remoteTemplate) Complete(ctx context.Context, arg, value string, args map[string]string) (*sdk.CompletionResultDetails, error) {
	return t.c.complete(ctx, reqName{"completion of resource template", t.def.URITemplate}, &sdk.CompleteReference{Type: "ref/resource", URI: t.def.URITemplate}, arg, value, args)
}

// complete sends completion/complete for ref. The request has no effect
// on the server, so it is safe to repeat.
func (c *Connector) complete(ctx context.Context, what reqName, ref *sdk.CompleteReference, arg, value string, args map[string]string) (*sdk.CompletionResultDetails, error) {
	out := &sdk.CompletionResultDetails{Values: []string{}}
	err := c.do(ctx, what, errs.ErrToolFailed, true, func(ctx context.Context, l *live, _ string) error {
		if !serverCompletes(l) {
			return nil
		}
		params := &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}}
		if len(args) > 0 {
			params.Context = &sdk.CompleteContext{Arguments: args}
		}
		withTraceContext(ctx, params)
		res, err := l.sess.Complete(ctx, params)
		if err != nil {
			return err
		}
		if res != nil {
			*out = res.Completion
			if out.Values == nil {
				out.Values = []string{}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// serverCompletes reports whether the server of l offers completions.
func serverCompletes(l *live) bool {
	init := l.sess.InitializeResult()
	return init != nil && init.Capabilities != nil && init.Capabilities.Completions != nil
}
