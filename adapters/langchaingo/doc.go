// Package langchaingo hands a toolkit to LangChainGo
// (github.com/tmc/langchaingo) for tool calling with llms.Model.
//
// A [Tools] follows its toolkit live. [Tools.LLMTools] returns the
// toolkit's current tools as llms.Tool values for llms.WithTools, under
// model-safe names (see model.Namer) with input schemas adapted as
// model.Encode does for OpenAI (a plain object root, which every provider
// LangChainGo supports accepts); call it for every request and a tool
// added, removed or changed in the toolkit is in the next request.
// Conversions are cached per tool and rebuilt only for tools that changed.
//
// To make the model call one tool, [Tools.ToolChoice] gives the tool
// choice for llms.WithToolChoice for a toolkit key ("github.create_issue",
// or a bare name): the tool is named as it is offered, model-safe name and
// all.
//
// [Tools.Run] runs the tool calls of a response choice and returns the
// messages to append to the conversation: the assistant message that
// carries the calls, then one tool message per call, in call order, as
// LangChainGo's providers expect (one ToolCallResponse per tool message).
// Calls run through a model.Dispatcher: concurrently, each under the
// optional timeout, with the arguments mended when asked (adapter.WithDispatch
// and model.WithRepair), the model's names mapped back to the toolkit's
// items. A call that fails (unknown tool, bad arguments, tool error,
// timeout) gets a tool message whose text tells the model what went wrong,
// so the conversation goes on. A tool response is text: JSON outputs are
// their JSON, a remote tool's content and structuredContent are both
// there (content first), and binary outputs (images, PDFs) are described
// in text.
//
// [Tools.AgentTools] offers the same tools to LangChainGo's agents, which
// call a tool with one input string: the description says which JSON the
// input must be.
//
// A catalogue too large to send whole is disclosed a little at a time:
// [Tools.Disclosed] returns the view of one conversation, whose LLMTools
// and AgentTools offer a search tool, the tools adapter.WithDisclosure
// always offers and the tools the model has found so far (a model.Loaded),
// and whose Run and agent tools answer the search tool's calls and run the
// others (see model.Disclosure). An agent takes its tools when it is made,
// so the tools found are offered to the next agent made with AgentTools.
package langchaingo
