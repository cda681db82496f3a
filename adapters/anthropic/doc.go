// Package anthropic hands a toolkit to the official Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2) for the Messages API.
//
// A [Tools] follows its toolkit live. [Tools.ToolParams] returns the
// toolkit's current tools as the SDK's tool definitions, under model-safe
// names (see model.Namer) with input schemas adapted to what Anthropic
// accepts (see model.Encode); call it for every request and a tool added,
// removed or changed in the toolkit is in the next request. Conversions are
// cached per tool and rebuilt only for tools that changed.
//
// To make Claude call one tool, [Tools.ToolChoice] gives the tool choice
// for a toolkit key ("github.create_issue", or a bare name): the tool is
// named as it is offered, model-safe name and all.
//
// [Tools.Run] runs the tool_use blocks of an assistant message and returns
// the user message that carries one tool_result block per call, in call
// order, as the Messages API requires; [Tools.Results] returns just the
// blocks. Calls run through a model.Dispatcher: concurrently, each under
// the optional timeout, with the arguments mended when asked (adapter.WithDispatch
// and model.WithRepair), the model's names mapped back to the toolkit's
// items.
//
// Streaming: feed each event of a Messages.NewStreaming stream to
// Message.Accumulate and, once the stream ends, hand the accumulated
// message to [Tools.Run] as if it had come whole:
//
//	stream := client.Messages.NewStreaming(ctx, params)
//	var msg anthropic.Message
//	for stream.Next() {
//		if err := msg.Accumulate(stream.Current()); err != nil { ... }
//		// show text deltas as they come
//	}
//	if err := stream.Err(); err != nil { ... }
//	params.Messages = append(params.Messages, msg.ToParam())
//	if reply, ok := tools.Run(ctx, &msg); ok {
//		params.Messages = append(params.Messages, reply) // and ask again
//	}
//
// The SDK's tool runner (client.Beta.Messages.NewToolRunner, and
// NewToolRunnerStreaming) runs that loop itself over anthropic.BetaTool
// values: [Tools.BetaTools] gives the toolkit's tools as such, each
// running its calls through the toolkit like Run does. A runner fixes its
// tool list with its first request; to follow the toolkit during a run,
// make a [RunnerTools] with [Tools.Follow] and call its Update before each
// turn: tools added, changed or removed since reach the runner's AddTools
// and RemoveToolsByNames, which tell the model with the next request
// (tool_addition and tool_removal blocks, under the
// anthropic.AnthropicBetaInlineTools2026_09_15 beta, which the runner's
// Params.Betas must name):
//
//	bt, err := tools.BetaTools(ctx)
//	runner := client.Beta.Messages.NewToolRunner(bt, anthropic.BetaToolRunnerParams{...})
//	follow := tools.Follow(runner, bt)
//	for {
//		if err := follow.Update(ctx); err != nil { ... }
//		msg, err := runner.NextMessage(ctx)
//		if err != nil || msg == nil { break }
//	}
//
// Without Update a runner keeps the tools it started with; a call still
// runs the toolkit's current tool of its name, and a call of a tool removed
// from the toolkit is answered that it is gone. [Tools.BetaToolChoice]
// forces a tool in a runner's params.
//
// A tool_result keeps what Anthropic can carry: text and JSON outputs as
// text, image outputs (JPEG, PNG, GIF, WebP, up to MaxImageBytes) as image
// blocks after their description, PDF documents (up to MaxDocumentBytes)
// as document blocks titled with their file name, and any other binary
// output as a text that says what it was. A remote tool's content goes
// block by block; when it also returns structuredContent, the model gets
// both, its content first and then the structured value's JSON (once,
// when the content is that JSON). A call that fails (unknown tool, bad arguments,
// tool error, timeout) gets a tool_result with is_error set and a text that
// tells the model what went wrong, so the conversation goes on.
//
// A catalogue too large to send whole is disclosed a little at a time:
// [Tools.Disclosed] returns the view of one conversation, whose ToolParams
// and BetaTools offer a search tool, the tools adapter.WithDisclosure
// always offers and the tools the model has found so far (a model.Loaded),
// and whose Run, Results and tool runner tools answer the search tool's
// calls and run the others (see model.Disclosure).
// [Tools.DeferredToolParams] leaves the search to Claude instead:
// Anthropic's tool search tool, and every tool that is not always offered
// sent with defer_loading; the tools Claude finds are called with ordinary
// tool_use blocks, which Run runs. With [WithToolReferences] a view keeps
// the toolkit's search but lets Claude load what it finds: every request
// sends the same tools, all but the search tool and the always-offered
// ones deferred, and a search's tool_result names the tools found with
// tool_reference blocks.
package anthropic
