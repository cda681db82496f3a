// Package genai hands a toolkit to Google's Gen AI Go SDK
// (google.golang.org/genai), for the Gemini API and Vertex AI.
//
// A [Tools] follows its toolkit live. [Tools.Tools] returns the toolkit's
// current tools as one genai.Tool holding a function declaration per tool,
// under model-safe names (see model.Namer), with each input schema turned
// into Gemini's OpenAPI-subset genai.Schema by the adaptations model.Encode
// documents (refs inlined, unions and nullability rewritten, unsupported
// keywords dropped); call it for every request and a tool added, removed or
// changed in the toolkit is in the next request. Conversions are cached
// per tool and rebuilt only for tools that changed.
//
// To make Gemini call one tool, [Tools.ToolConfig] gives the tool config
// (function calling in ANY mode, that one function allowed) for a toolkit
// key ("github.create_issue", or a bare name): the function is named as it
// is offered, model-safe name and all.
//
// [Tools.Run] runs the function calls of a response and returns the user
// content that carries one function response per call, in call order,
// each with the call's id and name; [Tools.Responses] returns just the
// parts. Calls run through a model.Dispatcher: concurrently, each under
// the optional timeout, with the arguments mended when asked
// (adapter.WithDispatch and model.WithRepair), the model's names mapped back to
// the toolkit's items.
//
// Streaming: Models.GenerateContentStream hands out a response in chunks,
// and a function call, or its arguments, may come in any of them. Add each
// chunk to an [Accumulator]; once the stream ends, its Response is what a
// non-streamed call would have returned: run it with [Tools.Run] and keep
// its content (thought signatures and all) in the history:
//
//	var acc tkgenai.Accumulator
//	for chunk, err := range client.Models.GenerateContentStream(ctx, model, contents, config) {
//		if err != nil { ... }
//		if err := acc.Add(chunk); err != nil { ... }
//		// show chunk.Text() as it comes
//	}
//	resp := acc.Response()
//	contents = append(contents, resp.Candidates[0].Content)
//	if reply, ok := tools.Run(ctx, resp); ok {
//		contents = append(contents, reply) // and ask again
//	}
//
// A function response's "output" holds the result: a JSON output as JSON,
// a text output as a string; a remote tool that returns both content and
// structuredContent gives both, as one string, its content first and then
// the structured value's JSON (a structured value alone stays JSON). An image or PDF output (PNG, JPEG, WebP or
// PDF, up to MaxMediaBytes) travels as inline data in the response's
// parts, after its description in "output"; any other binary output is
// described in text. A call that fails (unknown function, bad arguments,
// tool error, timeout) gets a response whose "error" tells the model what
// went wrong, so the conversation goes on.
//
// A catalogue too large to send whole is disclosed a little at a time:
// [Tools.Disclosed] returns the view of one conversation, whose Tools and
// Declarations offer a search tool, the tools adapter.WithDisclosure
// always offers and the tools the model has found so far (a model.Loaded),
// and whose Run and Responses answer the search tool's calls and run the
// others (see model.Disclosure).
package genai
