// Package model hands a toolkit to a language model.
//
// A Namer gives every tool and prompt a model-safe name and maps the names
// a model calls back to items. A Catalog keeps a toolkit's items, their
// names and a keyword index together, and turns a selection of them (by
// Filter, or by Search for a user message) into provider-neutral
// Definitions; under a toolkit's policy each answer holds only what the
// policy lets the caller (the principal of its ctx) see. Encode writes
// definitions as the tool list of a provider's request: OpenAI Chat
// Completions, OpenAI Responses, Anthropic Messages or Gemini, adapting
// each input schema to what that provider accepts. A
// Dispatcher runs the tool calls of a model turn through the toolkit and
// turns every outcome, failures included, into a Result the model can
// read. Repair mends argument strings that are almost JSON.
//
// A catalogue too large to send whole is disclosed a little at a time: a
// Disclosure offers the model a search tool and the tools it always
// needs, and the tools its searches find join the requests that follow
// (a conversation's found tools are a Loaded); for a provider that defers
// tool definitions itself (Anthropic's tool search), Split tells which
// tools to send at once and which Deferred. The ranking is package
// [github.com/llmkit/toolkit/search]'s, which the server face's tool
// search shares.
//
// SkillTool offers a model the toolkit's skills a little at a time too:
// each skill's name and description in the description of one tool,
// load_skill, whose calls load a skill's instructions and files.
//
// The package speaks the providers' JSON shapes directly and imports no
// provider SDK.
package model
