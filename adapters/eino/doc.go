// Package eino hands a toolkit to CloudWeGo's Eino framework
// (github.com/cloudwego/eino): each toolkit tool becomes an Eino
// tool.InvokableTool, with its Info and its InvokableRun, ready for a
// compose.ToolsNode or a ReAct agent.
//
// [Tools.Tools] returns the toolkit's current tools under model-safe names
// (see model.Namer), each Info holding its input schema (with the
// object-root adaptation model.Encode applies for OpenAI, which every
// provider accepts); [Tools.Infos] returns just the infos, for a chat
// model's WithTools. Conversions are cached per tool and rebuilt only for
// tools that changed.
//
// A ReAct agent (flow/agent/react) binds its tools when it is built, and
// so does a graph's tools node. To keep an agent built once in step with
// the toolkit, pass [Tools.AgentOptions] to each of its Generate or Stream
// calls: they offer the model the toolkit's current tools and make the
// tools node run them (react.WithTools for the current tools), so a tool
// added to the toolkit is offered and runs, and a removed one is no longer
// offered. [Tools.ComposeOptions] does the same for one run of a graph of
// one's own. Otherwise, build the agent or graph again when the tools
// should change.
// A tool kept from an earlier list still runs the toolkit's current item
// of its name, and answers that it is no longer available once the item is
// gone.
//
// To make the model call one tool, [Tools.ToolChoice] gives the chat model
// option (model.WithToolChoice, forced, that one tool allowed) for a
// toolkit key ("github.create_issue", or a bare name): the tool is named
// as it is offered, model-safe name and all.
//
// InvokableRun runs the call through a model.Dispatcher (the optional
// timeout, argument repair with adapter.WithDispatch and model.WithRepair), under
// the id Eino gives the call. A call that fails (bad arguments, tool error,
// timeout) returns a nil error and a text that tells the model what went
// wrong, so the agent goes on rather than stopping its graph. Text and
// JSON outputs are returned as they are (a remote tool's content and
// structuredContent both, content first); an InvokableTool returns a string,
// so a binary output (an image) is described in text. With WithMultimodal
// the tools are EnhancedInvokableTools instead, and an image output travels
// as an image part of the schema.ToolResult.
//
// A catalogue too large to send whole is disclosed a little at a time:
// [Tools.Disclosed] returns the view of one conversation, whose Tools,
// Infos, ComposeOptions and AgentOptions offer a search tool, the tools
// adapter.WithDisclosure always offers and the tools the model has found
// so far (a model.Loaded), and whose tools answer the search tool's calls
// and run the others (see model.Disclosure). A run binds its tools when it
// starts, so the tools found are offered from the next run on.
package eino
