// Package model hands a toolkit to a language model.
//
// A Namer gives every tool and prompt a model-safe name and maps the names
// a model calls back to items. A Catalog keeps a toolkit's items, their
// names and a keyword index together, and turns a selection of them (by
// Filter, or by Search for a user message) into provider-neutral
// Definitions. Encode writes definitions as the tool list of a provider's
// request: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages or
// Gemini, adapting each input schema to what that provider accepts. A
// Dispatcher runs the tool calls of a model turn through the toolkit and
// turns every outcome, failures included, into a Result the model can
// read. Repair mends argument strings that are almost JSON.
//
// The package speaks the providers' JSON shapes directly and imports no
// provider SDK.
package model
