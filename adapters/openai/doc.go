// Package openai hands a toolkit to the official OpenAI Go SDK
// (github.com/openai/openai-go/v3), for both the Chat Completions and the
// Responses API.
//
// A [Tools] follows its toolkit live. [Tools.ChatTools] and
// [Tools.ResponseTools] return the toolkit's current tools as the SDK's
// tool parameters, under model-safe names (see model.Namer) with their
// input schemas adapted to what OpenAI accepts (see model.Encode); call
// them for every request and a tool added, removed or changed in the
// toolkit is in the next request. Conversions are cached per tool and
// rebuilt only for tools that changed.
//
// Strict mode is on by default: a tool whose input schema qualifies for
// OpenAI's strict function calling (see model.IsStrictSchema: every object
// closed with additionalProperties false and all its properties required,
// only keywords strict mode supports, as the schema of a Go struct without
// optional fields is) is sent with "strict": true, so the model's
// arguments always match it; every other tool is sent with "strict":
// false, never rejected. [WithStrict](false) sends every tool non-strict.
//
// To make the model call one tool, [Tools.ChatToolChoice] and
// [Tools.ResponseToolChoice] give the tool choice for a toolkit key
// ("github.create_issue", or a bare name): the tool is named as it is
// offered, model-safe name and all.
//
// [Tools.RunChat] runs the function calls of an assistant message and
// returns the tool messages to append to the conversation;
// [Tools.RunResponse] does the same for the function_call items of a
// Responses output and returns function_call_output items. Calls run
// through a model.Dispatcher: concurrently, each under the optional
// timeout, with the arguments mended when asked (adapter.WithDispatch and
// model.WithRepair), the model's names mapped back to the toolkit's items.
// A call that fails (unknown tool, bad arguments, tool error, timeout)
// still gets its result, whose text tells the model what went wrong, so
// the conversation goes on.
//
// Streaming works the same way once a turn's stream has ended. In Chat
// Completions, add each chunk to an openai.ChatCompletionAccumulator
// (which joins the tool calls' argument deltas) and run its message:
//
//	stream := client.Chat.Completions.NewStreaming(ctx, params)
//	var acc openai.ChatCompletionAccumulator
//	for stream.Next() {
//		acc.AddChunk(stream.Current()) // and show the content deltas
//	}
//	if err := stream.Err(); err != nil { ... }
//	msg := acc.Choices[0].Message
//	params.Messages = append(params.Messages, msg.ToParam())
//	params.Messages = append(params.Messages, tools.RunChat(ctx, msg)...)
//
// In the Responses API the response.completed event carries the whole
// response: run its output with RunResponse
// (ev.AsResponseCompleted().Response.Output).
//
// Results keep what the API can carry. Text and JSON outputs are the
// message text; a remote tool that returns both content and
// structuredContent gives both, its content first and then the structured
// value's JSON (once, when the content is that JSON). The Responses API
// takes images and files in a function call's output, so an image output
// (PNG, JPEG, GIF or WebP, up to MaxImageBytes) is sent there as an
// input_image after its description, and a PDF document (up to
// MaxDocumentBytes) as an input_file with its file name. Chat Completions
// tool messages carry text only: there the tool message describes the
// image and RunChat appends one user message that shows the images of the
// turn, each after a line naming its call; a PDF is described. Other
// binary outputs are described in text and not sent.
//
// A catalogue too large to send whole is disclosed a little at a time:
// [Tools.Disclosed] returns the view of one conversation, whose ChatTools
// and ResponseTools offer a search tool, the tools adapter.WithDisclosure
// always offers and the tools the model has found so far (a model.Loaded),
// and whose RunChat and RunResponse answer the search tool's calls and run
// the others (see model.Disclosure).
package openai
