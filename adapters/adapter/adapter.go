// Package adapter holds what every provider adapter of this repository
// (openai, anthropic, genai, eino, langchaingo) accepts the same way: the
// [Toolkit] it works over and the [Option] values that configure it.
//
// An adapter's New takes a Toolkit and any of these options, as an SDK's
// option package does:
//
//	tools := openai.New(tk, adapter.WithFilter(model.Filter{ReadOnly: true}))
//
// For a catalogue too large to send whole, each adapter's Disclosed
// method returns a view of its tools for one conversation that offers a
// search tool and the tools found so far instead of every tool (see
// [WithDisclosure] and [model.Disclosure]):
//
//	tools := openai.New(tk, adapter.WithDisclosure(model.WithAlways(model.Filter{Names: []string{"get_time"}})))
//	var found model.Loaded // one per conversation
//	conv := tools.Disclosed(&found)
//	params.Tools, err = conv.ChatTools(ctx) // search_tools, get_time, and what the model found
//	params.Messages = append(params.Messages, conv.RunChat(ctx, msg)...)
//
// An adapter may add options of its own (eino.WithMultimodal); they are
// Options too and mix freely with these.
package adapter

import (
	"context"

	"github.com/llmkit/toolkit/model"
)

// Toolkit is what an adapter needs of a toolkit: listing its items and
// calling them. *toolkit.Toolkit implements it, and also the optional
// [model.Notifier] (Notify(chan<- struct{}, ...toolkit.ConnectorEventKind)
// func()) that lets the adapter's [model.Catalog] list the toolkit again
// only after it signalled a change of its tools or prompts, so that an
// unchanged toolkit costs a channel check and a change made through the
// toolkit's methods is in the adapter's next tool list once the method has
// returned, and the optional LookupItem method that makes each call run
// the toolkit's current item.
type Toolkit interface {
	model.Lister
	model.Caller
}

// Option configures an adapter (its [Config]). The options of this package apply to every
// adapter; an adapter documents any option of its own.
type Option func(*Config)

// Config is what the options set; an adapter reads it once, when it is
// created. Its zero value is the default of every adapter.
type Config struct {
	// Catalog, when set, is used instead of a new catalog over the toolkit
	// (see [WithCatalog]).
	Catalog *model.Catalog
	// Filter selects the items offered to the model (see [WithFilter]).
	Filter model.Filter
	// Dispatch configures how calls run (see [WithDispatch]).
	Dispatch []model.DispatchOption
	// OnResult, when set, sees every result before it is converted (see
	// [WithOnResult]).
	OnResult func(context.Context, model.Result)
	// Multimodal asks an adapter whose framework has both text-only and
	// multimodal tool results for the multimodal ones (see
	// eino.WithMultimodal); the other adapters ignore it.
	Multimodal bool
	// Disclosure configures the progressive disclosure of an adapter's
	// Disclosed views (see [WithDisclosure]).
	Disclosure []model.DisclosureOption
	// ToolReferences asks an adapter whose provider loads deferred tools
	// named by the client's own search (Anthropic's tool_reference) to
	// disclose that way (see anthropic.WithToolReferences); the other
	// adapters ignore it.
	ToolReferences bool
	// Strict, when set, says whether an adapter whose provider has a strict
	// mode sends the tools whose schema qualifies in it (see
	// openai.WithStrict); nil leaves the adapter's default. The other
	// adapters ignore it.
	Strict *bool
}

// NewConfig returns the configuration opts make, applied in order over the
// zero Config.
func NewConfig(opts ...Option) Config {
	var c Config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithFilter selects the items offered to the model (default: every tool,
// no prompt).
func WithFilter(f model.Filter) Option { return func(c *Config) { c.Filter = f } }

// WithCatalog makes the adapter use cat, which must be a catalog over the
// same toolkit (for example one shared with another adapter, so that both
// give the same names).
func WithCatalog(cat *model.Catalog) Option { return func(c *Config) { c.Catalog = cat } }

// WithDispatch configures how calls run: [model.WithConcurrency],
// [model.WithTimeout], [model.WithRepair]. Successive WithDispatch options add
// up. (An adapter whose framework runs each call on its own, as eino's
// does, has no use for model.WithConcurrency.)
func WithDispatch(opts ...model.DispatchOption) Option {
	return func(c *Config) { c.Dispatch = append(c.Dispatch, opts...) }
}

// WithOnResult makes every call's [model.Result] (with its Go error, for
// logs) go to f before the adapter turns it into what its SDK or framework
// takes.
func WithOnResult(f func(context.Context, model.Result)) Option {
	return func(c *Config) { c.OnResult = f }
}

// WithDisclosure configures the progressive disclosure an adapter offers
// through its Disclosed views (each adapter's Tools.Disclosed): which
// tools every request carries besides the search tool
// ([model.WithAlways]), how many tools a search returns, how many found
// tools a conversation keeps, the search tool's name (see
// [model.NewDisclosure]). The search finds the tools the adapter's filter
// ([WithFilter]) keeps unless [model.WithSearchable] says otherwise.
// Successive WithDisclosure options add up. Without it, a Disclosed view
// offers the search tool alone until the model finds tools.
func WithDisclosure(opts ...model.DisclosureOption) Option {
	return func(c *Config) { c.Disclosure = append(c.Disclosure, opts...) }
}
