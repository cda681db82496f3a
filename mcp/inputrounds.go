package mcp

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/bridge"
)

// Bounds of the rounds of one multi round-trip request, as the go-sdk's
// own client has them.
const (
	// maxRounds is the most rounds of one request.
	maxRounds = 10
	// maxShedRounds is the most input-required results without a request
	// (the server shedding load) one request takes.
	maxShedRounds = 3
)

// passing marks the context of a tools/call whose input-required result
// goes back to the caller (bridge.InputRound) rather than being answered.
type passingRounds struct{}

// roundTrips is the client's sending middleware that runs the rounds of a
// multi round-trip request (protocol 2026-07-28: a tools/call, prompts/get
// or resources/read answered with an input-required result is sent again
// with the answers and the server's requestState), in place of the
// go-sdk's own, which the connector turns off: it answers the server's
// input requests through the same handlers as the server requests of an
// older protocol (answer), and a tools/call whose caller passes on them
// (callTool, bridge.InputRound) gets the input-required result itself.
func (c *Connector) roundTrips(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/call", "prompts/get", "resources/read":
		default:
			return next(ctx, method, req)
		}
		shed := 0
		for round := 1; ; round++ {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			asks, state, ok := inputRequired(res)
			if !ok {
				return res, nil
			}
			if ctx.Value(passingRounds{}) != nil && len(state) <= bridge.MaxPassedState {
				return res, nil
			}
			if len(asks) == 0 {
				if shed++; shed >= maxShedRounds {
					return nil, fmt.Errorf("multi round-trip: the server shed load %d times", shed)
				}
			}
			if round >= maxRounds {
				return nil, fmt.Errorf("multi round-trip: more than %d rounds", maxRounds)
			}
			cs, ok := req.GetSession().(*sdk.ClientSession)
			if !ok {
				return res, nil
			}
			answers, err := c.fulfil(ctx, cs, asks)
			if err != nil {
				return nil, err
			}
			if req, err = retryRequest(cs, req, answers, state); err != nil {
				return nil, err
			}
		}
	}
}

// inputRequired returns the input requests and requestState of an
// input-required result, and whether res is one.
func inputRequired(res sdk.Result) (sdk.InputRequestMap, string, bool) {
	switch r := res.(type) {
	case *sdk.CallToolResult:
		return r.InputRequests, r.RequestState, r.InputRequests != nil || r.NeedsInput()
	case *sdk.GetPromptResult:
		return r.InputRequests, r.RequestState, r.InputRequests != nil || r.NeedsInput()
	case *sdk.ReadResourceResult:
		return r.InputRequests, r.RequestState, r.InputRequests != nil || r.NeedsInput()
	}
	return nil, "", false
}

// retryRequest returns the next round of req: a copy of its params (never
// changed: they are the caller's) with the answers and the server's
// requestState.
func retryRequest(cs *sdk.ClientSession, req sdk.Request, answers sdk.InputResponseMap, state string) (sdk.Request, error) {
	switch p := req.GetParams().(type) {
	case *sdk.CallToolParams:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &sdk.ClientRequest[*sdk.CallToolParams]{Session: cs, Params: &cp}, nil
	case *sdk.GetPromptParams:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &sdk.ClientRequest[*sdk.GetPromptParams]{Session: cs, Params: &cp}, nil
	case *sdk.ReadResourceParams:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &sdk.ClientRequest[*sdk.ReadResourceParams]{Session: cs, Params: &cp}, nil
	}
	return nil, fmt.Errorf("multi round-trip: unexpected params %T", req.GetParams())
}

// fulfil answers the input requests of one round, each through the
// handler of its kind (answerInput), at once; the first failure fails
// the round. At most one more request than MaxServerRequestsPerCall runs at a
// time: the per-call bound (enterServerRequest) refuses that one while the others
// wait for their answers, which fails the round, so a round of a hundred
// thousand requests costs a few goroutines, not one each.
func (c *Connector) fulfil(ctx context.Context, cs *sdk.ClientSession, asks sdk.InputRequestMap) (sdk.InputResponseMap, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answers  = make(sdk.InputResponseMap, len(asks))
		firstErr error
		running  = make(chan struct{}, MaxServerRequestsPerCall+1)
	)
	for key, ask := range asks {
		select {
		case running <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-running }()
			a, err := c.answerInput(ctx, cs, ask)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("multi round-trip: input request %q: %w", key, err)
					cancel()
				}
				return
			}
			answers[key] = a
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	return answers, nil
}

// answerInput answers one input request as the server request of the same
// kind is answered (answer): the caller's session first, then the
// connector's own handler; roots are the connector's own.
func (c *Connector) answerInput(ctx context.Context, cs *sdk.ClientSession, ask sdk.InputRequest) (sdk.InputResponse, error) {
	switch p := ask.(type) {
	case *sdk.ElicitParams:
		if !c.o.forwardRequests && c.o.elicitation == nil {
			return nil, c.refuse(kindElicitation, 0)
		}
		return answer(c, ctx, cs, kindElicitation, p, bridge.ServerRequestHandler.Elicit, c.o.elicitation)
	case *sdk.CreateMessageParams:
		return c.sampleInput(ctx, cs, p)
	case *sdk.CreateMessageWithToolsParams:
		base, err := baseSampling(p)
		if err != nil {
			return nil, err
		}
		return c.sampleInput(ctx, cs, base)
	case *sdk.ListRootsParams:
		if !c.offersRoots() {
			return nil, c.refuse(kindRoots, 0)
		}
		return c.ownRoots(ctx, p)
	}
	return nil, fmt.Errorf("unknown input request %T", ask)
}

// sampleInput answers a sampling input request, in the shape the go-sdk's
// servers decode (content as a list).
func (c *Connector) sampleInput(ctx context.Context, cs *sdk.ClientSession, p *sdk.CreateMessageParams) (sdk.InputResponse, error) {
	if !c.o.forwardRequests && c.o.sampling == nil {
		return nil, c.refuse(kindSampling, 0)
	}
	r, err := answer(c, ctx, cs, kindSampling, p, bridge.ServerRequestHandler.CreateMessage, c.o.sampling)
	if err != nil {
		return nil, err
	}
	var content []sdk.Content
	if r.Content != nil {
		content = []sdk.Content{r.Content}
	}
	return &sdk.CreateMessageWithToolsResult{Meta: r.Meta, Content: content, Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
}

// baseSampling turns a sampling request with tools into the plain one the
// connector's handlers take, as the go-sdk's client does: one content
// block a message (tools are not offered to those handlers).
func baseSampling(p *sdk.CreateMessageWithToolsParams) (*sdk.CreateMessageParams, error) {
	msgs := make([]*sdk.SamplingMessage, 0, len(p.Messages))
	for i, m := range p.Messages {
		if m == nil {
			continue
		}
		if len(m.Content) > 1 {
			return nil, fmt.Errorf("sampling message %d has %d content blocks; the connector's handlers take one", i, len(m.Content))
		}
		var content sdk.Content
		if len(m.Content) == 1 {
			content = m.Content[0]
		}
		msgs = append(msgs, &sdk.SamplingMessage{Content: content, Role: m.Role})
	}
	return &sdk.CreateMessageParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt,
		Temperature: p.Temperature}, nil
}

// passRounds returns ctx marked for passing (roundTrips) when the caller
// passes on the input rounds of item (bridge.InputRound), with the client's
// answers and the server's requestState of a retry set in responses and
// state, and whether it does.
func passRounds(ctx context.Context, item any, responses *sdk.InputResponseMap, state *string) (context.Context, bool) {
	round, ok := bridge.InputRoundFor(ctx, item)
	if !ok {
		return ctx, false
	}
	*responses, *state = round.Responses, round.State
	return context.WithValue(ctx, passingRounds{}, round), true
}

// passedRound returns the *bridge.InputRequired error of res, an
// input-required result of a passed request, or nil.
func passedRound(res sdk.Result, passed bool) error {
	if !passed {
		return nil
	}
	if asks, state, ok := inputRequired(res); ok {
		return &bridge.InputRequired{Requests: asks, State: state}
	}
	return nil
}
