package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/llmkit/toolkit/search"
	"slices"
	"sync"

	"github.com/llmkit/toolkit/internal/errs"
)

// Defaults of a Disclosure.
const (
	// DefaultSearchToolName is the name of the search tool a Disclosure
	// offers.
	DefaultSearchToolName = "search_tools"
	// DefaultSearchLimit is how many tools one search returns unless the
	// model asks for another number (at most MaxSearchLimit).
	DefaultSearchLimit = 5
	// MaxSearchLimit bounds the tools one search returns.
	MaxSearchLimit = 20
	// DefaultMaxLoaded is how many found tools a conversation keeps
	// offering; the least recently found go first.
	DefaultMaxLoaded = 32
)

// Disclosure offers a model a catalogue too large to send whole, a little
// at a time (progressive disclosure): each request carries a search tool
// and the tools that are always needed (WithAlways), and the tools the
// model found with the search tool join the requests that follow. A
// conversation's found tools are a [Loaded]; the Disclosure itself holds
// no conversation state and is safe for concurrent use.
//
// A turn goes:
//
//	defs, err := d.Definitions(ctx, loaded) // search tool + always + found
//	... send defs (Encode) and the messages; the model answers with calls ...
//	results := d.Dispatch(ctx, dispatcher, loaded, calls...)
//
// Dispatch answers the search tool's calls itself (the hits' names and
// one-line descriptions, and the hits join loaded) and runs every other
// call with the Dispatcher. A provider whose API defers tool definitions
// natively (Anthropic's tool search: every tool sent with defer_loading,
// found by a server-side search tool) needs none of this: [Disclosure.Split]
// tells which tools to send at once and which deferred.
type Disclosure struct {
	cat        *Catalog
	always     *Filter
	searchable Filter
	name       string
	limit      int
	maxLoaded  int
}

// DisclosureOption configures a Disclosure.
type DisclosureOption func(*Disclosure)

// WithAlways offers the tools f keeps on every request, whether or not
// the model searched for them (default: none). Search does not return
// them.
func WithAlways(f Filter) DisclosureOption { return func(d *Disclosure) { d.always = &f } }

// WithSearchable limits what the search tool finds to the items f keeps
// (default: the zero Filter, every tool and no prompt).
func WithSearchable(f Filter) DisclosureOption { return func(d *Disclosure) { d.searchable = f } }

// WithSearchToolName names the search tool (default
// DefaultSearchToolName). A catalogue tool with the same model name is not
// offered.
func WithSearchToolName(name string) DisclosureOption {
	return func(d *Disclosure) {
		if name != "" {
			d.name = name
		}
	}
}

// WithSearchLimit sets how many tools a search returns when the model does
// not say (default DefaultSearchLimit; 1 to MaxSearchLimit).
func WithSearchLimit(n int) DisclosureOption {
	return func(d *Disclosure) { d.limit = min(max(n, 1), MaxSearchLimit) }
}

// WithMaxLoaded bounds the found tools a conversation keeps offering
// (default DefaultMaxLoaded; at least 1): past it, the least recently
// found tool is dropped from the requests.
func WithMaxLoaded(n int) DisclosureOption {
	return func(d *Disclosure) { d.maxLoaded = max(n, 1) }
}

// NewDisclosure returns a disclosure over the catalogue cat.
func NewDisclosure(cat *Catalog, opts ...DisclosureOption) *Disclosure {
	d := &Disclosure{cat: cat, name: DefaultSearchToolName, limit: DefaultSearchLimit, maxLoaded: DefaultMaxLoaded}
	for _, o := range opts {
		if o != nil {
			o(d)
		}
	}
	return d
}

// Loaded is what one conversation's model has found: the model names of
// the tools its searches returned, least recently found first. The zero
// value is empty and ready; it is safe for concurrent use. An application
// that keeps conversations between requests keeps their Names and makes
// the Loaded again with Load.
type Loaded struct {
	mu    sync.Mutex
	names []string
}

// Names returns the found tools' model names, least recently found first.
func (l *Loaded) Names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names)
}

// Load marks names as found, most recently last, keeping at most max
// names (the least recently found go first; max < 1 keeps all).
func (l *Loaded) Load(max int, names ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range names {
		l.names = slices.DeleteFunc(l.names, func(x string) bool { return x == n })
		l.names = append(l.names, n)
	}
	if max > 0 && len(l.names) > max {
		l.names = slices.Delete(l.names, 0, len(l.names)-max)
	}
}

// searchInput is the search tool's arguments.
type searchInput struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// SearchTool returns the definition of the search tool.
func (d *Disclosure) SearchTool() Definition {
	return Definition{
		Name: d.name,
		Description: "Search the available tools. Only a few tools are loaded at first; describe what you want to do " +
			"(for example \"delete a file\" or \"list open pull requests\") and the best matching tools are returned, " +
			"best first. The tools found can be called from the next turn on.",
		Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","description":"What you want to do, in a few words."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"How many tools to return (default %d)."}},`+
			`"required":["query"],"additionalProperties":false}`, MaxSearchLimit, d.limit)),
	}
}

// Definitions returns what a request offers the model: the search tool,
// the always-offered tools, and the tools l holds (those no longer in the
// catalogue are left out). Definitions that cannot be built are reported
// in the error, the others returned.
func (d *Disclosure) Definitions(ctx context.Context, l *Loaded) ([]Definition, error) {
	out := []Definition{d.SearchTool()}
	seen := map[string]bool{d.name: true}
	var errList []error
	if d.always != nil {
		defs, err := d.cat.Definitions(ctx, *d.always)
		errList = append(errList, err)
		for _, def := range defs {
			if !seen[def.Name] {
				seen[def.Name] = true
				out = append(out, def)
			}
		}
	}
	if l != nil {
		names := l.Names()
		if len(names) > 0 {
			defs, err := d.cat.Definitions(ctx, d.searchable)
			errList = append(errList, err)
			byName := make(map[string]Definition, len(defs))
			for _, def := range defs {
				byName[def.Name] = def
			}
			for _, n := range names {
				if def, ok := byName[n]; ok && !seen[n] {
					seen[n] = true
					out = append(out, def)
				}
			}
		}
	}
	return out, errors.Join(errList...)
}

// Split returns the always-offered tools and every other searchable tool,
// for a provider that defers tool definitions natively: send always as
// usual and deferred, which have Deferred set (Encode writes them with
// defer_loading for Anthropic), with the provider's own search tool
// (Anthropic's tool_search_tool_bm25 or tool_search_tool_regex). The
// provider searches and loads; the calls of the tools it finds are
// ordinary tool calls, for a Dispatcher.
func (d *Disclosure) Split(ctx context.Context) (always, deferred []Definition, err error) {
	all, err := d.cat.Definitions(ctx, d.searchable)
	for _, def := range all {
		if def.Name == d.name {
			continue
		}
		if d.always != nil && d.always.Match(def.Item) {
			always = append(always, def)
		} else {
			def.Deferred = true
			deferred = append(deferred, def)
		}
	}
	return always, deferred, err
}

// IsSearch reports whether c calls the search tool.
func (d *Disclosure) IsSearch(c ToolCall) bool { return c.Name == d.name }

// FoundTool is one tool in the answer of the search tool.
type FoundTool struct {
	// Name is the model name to call it by.
	Name string `json:"name"`
	// Description is the first sentence of its description.
	Description string `json:"description,omitempty"`
}

// searchAnswer is what the search tool answers.
type searchAnswer struct {
	Tools []FoundTool `json:"tools"`
	Note  string      `json:"note"`
}

// Search runs a call of the search tool: it finds the tools that best
// match the query, marks them found in l, and answers with their names and
// one-line descriptions. Bad arguments are an error Result the model can
// read, as for any tool.
func (d *Disclosure) Search(ctx context.Context, l *Loaded, c ToolCall) Result {
	r := Result{ID: c.ID, Name: c.Name}
	var in searchInput
	if err := json.Unmarshal([]byte(c.Arguments), &in); err != nil || in.Query == "" {
		if err == nil {
			err = errors.New(`"query" is required`)
		}
		r.IsError, r.Err = true, fmt.Errorf("%w: %s: %v", errs.ErrBadParameter, d.name, err)
		r.Content = fmt.Sprintf("Bad arguments for %s: %v. Give {\"query\": \"what you want to do\"}.", d.name, err)
		return r
	}
	limit := d.limit
	if in.Limit > 0 {
		limit = min(in.Limit, MaxSearchLimit)
	}
	defs, err := d.cat.Search(ctx, in.Query, limit+d.alwaysSlack(), d.searchable)
	if err != nil && len(defs) == 0 {
		r.IsError, r.Err = true, err
		r.Content = fmt.Sprintf("%s failed: %v", d.name, err)
		return r
	}
	ans := searchAnswer{Tools: []FoundTool{}}
	var names []string
	for _, def := range defs {
		if def.Name == d.name || (d.always != nil && d.always.Match(def.Item)) {
			continue
		}
		if len(ans.Tools) == limit {
			break
		}
		ans.Tools = append(ans.Tools, FoundTool{Name: def.Name, Description: search.Summary(def.Description)})
		names = append(names, def.Name)
	}
	if l != nil {
		l.Load(d.maxLoaded, names...)
	}
	if len(names) == 0 {
		ans.Note = "No tool matches; try other words."
	} else {
		ans.Note = "These tools are now available: call them by name."
	}
	data, _ := json.Marshal(ans)
	r.Content, r.JSON = string(data), true
	return r
}

// alwaysSlack is how many more hits a search asks for, so that the
// always-offered tools it drops do not shorten the answer.
func (d *Disclosure) alwaysSlack() int {
	if d.always == nil {
		return 0
	}
	return MaxSearchLimit
}

// Dispatch runs a model turn's calls: the search tool's with Search, the
// others with disp (concurrently, as disp.Dispatch does). Results are in
// call order.
func (d *Disclosure) Dispatch(ctx context.Context, disp *Dispatcher, l *Loaded, calls ...ToolCall) []Result {
	results := make([]Result, len(calls))
	var rest []ToolCall
	var at []int
	for i, c := range calls {
		if d.IsSearch(c) {
			results[i] = d.Search(ctx, l, c)
			continue
		}
		rest = append(rest, c)
		at = append(at, i)
	}
	for j, r := range disp.Dispatch(ctx, rest...) {
		results[at[j]] = r
	}
	return results
}
