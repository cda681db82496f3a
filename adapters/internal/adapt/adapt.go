// Package adapt holds what every provider adapter does the same way: it
// keeps a model.Catalog and a model.Dispatcher over one toolkit, converts
// definitions to SDK values once per change, and splits a tool result
// into the text and media parts a provider message can carry.
package adapt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/model"
)

// Core is a catalog and a dispatcher over one toolkit, and the
// progressive disclosure of its tools.
type Core struct {
	Catalog    *model.Catalog
	Dispatcher *model.Dispatcher
	Filter     model.Filter
	// Multimodal is adapter.Config.Multimodal.
	Multimodal bool
	// Disclosure is the progressive disclosure over Catalog that the
	// adapter's Disclosed views use (adapter.WithDisclosure).
	Disclosure *model.Disclosure
	onResult   func(context.Context, model.Result)
	// loaded is the conversation of a view made by Disclosed; nil for the
	// adapter's own core, which offers every tool.
	loaded *model.Loaded
}

// NewCore returns the core of an adapter over tk, configured by opts.
func NewCore(tk adapter.Toolkit, opts ...adapter.Option) *Core {
	c := adapter.NewConfig(opts...)
	cat := c.Catalog
	if cat == nil {
		cat = model.NewCatalog(tk)
	}
	dopts := append([]model.DisclosureOption{model.WithSearchable(c.Filter)}, c.Disclosure...)
	return &Core{
		Catalog:    cat,
		Dispatcher: model.NewDispatcher(tk, cat, c.Dispatch...),
		Filter:     c.Filter,
		Multimodal: c.Multimodal,
		Disclosure: model.NewDisclosure(cat, dopts...),
		onResult:   c.OnResult,
	}
}

// Disclosed returns the core of one conversation's view of c's tools:
// its Definitions are the Disclosure's for l (the search tool, the
// always-offered tools and those l holds) and its Dispatch answers the
// search tool's calls, loading what they find into l. A nil l is a new,
// empty one.
func (c *Core) Disclosed(l *model.Loaded) *Core {
	if l == nil {
		l = new(model.Loaded)
	}
	v := *c
	v.loaded = l
	return &v
}

// Definitions returns the definitions of the items the filter keeps, as of
// the toolkit's current state (in a Disclosed view, the disclosure's).
// Definitions that cannot be built are left out and reported in the
// error; the others are returned.
func (c *Core) Definitions(ctx context.Context) ([]model.Definition, error) {
	if c.loaded != nil {
		return c.Disclosure.Definitions(ctx, c.loaded)
	}
	return c.Catalog.Definitions(ctx, c.Filter)
}

// NameFor returns the model name of the tool key stands for among those
// the filter keeps (see model.Catalog.NameFor), for an adapter's tool
// choice.
func (c *Core) NameFor(ctx context.Context, key string) (string, error) {
	return c.Catalog.NameFor(ctx, key, c.Filter)
}

// Converter pairs a [Cache] with the conversion it caches, over a [Core]:
// it gives an adapter's two ways of asking for tools in a provider's terms
// (ChatTools and ChatToolsOf, ToolParams and ToolParamsOf, ...): the
// toolkit's current tools ([Converter.Current]) and given definitions
// ([Converter.Of]). The conversion is given the core its value runs
// through (a tool object's calls): the adapter's own, except for the
// search tool of a Disclosed view, which runs through the view's. It is
// safe for concurrent use.
type Converter[T any] struct {
	core  *Core // the view's, in a view
	base  *Core // the adapter's
	conv  func(*Core, model.Definition) (T, error)
	cache *Cache[T]
	// search is a view's conversion of its search tool, made once.
	search    sync.Once
	searchVal T
	searchErr error
}

// NewConverter returns a Converter over core that converts a definition
// with conv.
func NewConverter[T any](core *Core, conv func(*Core, model.Definition) (T, error)) *Converter[T] {
	return &Converter[T]{core: core, base: core, conv: conv, cache: new(Cache[T])}
}

// For returns the converter of the view view (made by the Disclosed of
// c's core), which shares c's cache.
func (c *Converter[T]) For(view *Core) *Converter[T] {
	return &Converter[T]{core: view, base: c.base, conv: c.conv, cache: c.cache}
}

// Of returns the conversions of defs, in order. Definitions that cannot be
// converted are left out and reported in the error (joined), each error
// naming its tool; the others are returned. The values are cached (see
// [Cache]) and shared.
func (c *Converter[T]) Of(defs []model.Definition) ([]T, error) {
	return c.cache.Convert(defs, func(d model.Definition) (T, error) { return c.conv(c.base, d) })
}

// Current returns the conversions of the definitions of the items the
// filter keeps, as of the toolkit's current state (in a view, the
// disclosure's: the search tool first). Definitions that cannot be built
// or converted are left out and reported in the error (joined); the
// others are returned.
func (c *Converter[T]) Current(ctx context.Context) ([]T, error) {
	defs, err := c.core.Definitions(ctx)
	if defs == nil && err != nil {
		return nil, err
	}
	var out []T
	var serr error
	if c.core.loaded != nil && len(defs) > 0 && c.core.Disclosure.IsSearch(model.ToolCall{Name: defs[0].Name}) {
		// The search tool's value runs through this view (its calls load
		// into the view's Loaded), so it is this view's own.
		c.search.Do(func() {
			c.searchVal, c.searchErr = c.conv(c.core, defs[0])
			if c.searchErr != nil {
				c.searchErr = fmt.Errorf("tool %q: %w", defs[0].Name, c.searchErr)
			}
		})
		if serr = c.searchErr; serr == nil {
			out = append(out, c.searchVal)
		}
		defs = defs[1:]
	}
	rest, cerr := c.Of(defs)
	if out == nil {
		return rest, errors.Join(err, cerr)
	}
	return append(out, rest...), errors.Join(err, serr, cerr)
}

// Dispatch runs calls and hands every result to the OnResult hook. In a
// Disclosed view, the search tool's calls are answered by the
// disclosure, and what they find is loaded.
func (c *Core) Dispatch(ctx context.Context, calls []model.ToolCall) []model.Result {
	if len(calls) == 0 {
		return nil
	}
	var res []model.Result
	if c.loaded != nil {
		res = c.Disclosure.Dispatch(ctx, c.Dispatcher, c.loaded, calls...)
	} else {
		res = c.Dispatcher.Dispatch(ctx, calls...)
	}
	if c.onResult != nil {
		for _, r := range res {
			c.onResult(ctx, r)
		}
	}
	return res
}

// Cache converts definitions to an SDK's tool values and keeps each
// conversion until its definition changes, so that handing an unchanged
// toolkit to the model again costs a comparison per tool. The zero Cache
// is ready; it is safe for concurrent use.
type Cache[T any] struct {
	mu sync.Mutex
	m  map[string]cached[T]
}

type cached[T any] struct {
	desc     string
	params   []byte
	strict   bool
	deferred bool
	v        T
}

func (e cached[T]) matches(d model.Definition) bool {
	return e.desc == d.Description && e.strict == d.Strict && e.deferred == d.Deferred && bytes.Equal(e.params, d.Parameters)
}

// Convert returns the conversions of defs, in order. Definitions conv
// fails on are left out and reported in the error (joined), each error
// naming its tool.
func (c *Cache[T]) Convert(defs []model.Definition, conv func(model.Definition) (T, error)) ([]T, error) {
	out := make([]T, len(defs))
	have := make([]bool, len(defs))
	c.mu.Lock()
	for i, d := range defs {
		if e, ok := c.m[d.Name]; ok && e.matches(d) {
			out[i], have[i] = e.v, true
		}
	}
	c.mu.Unlock()

	var errList []error
	fresh := map[string]cached[T]{}
	for i, d := range defs {
		if have[i] {
			continue
		}
		v, err := conv(d)
		if err != nil {
			errList = append(errList, fmt.Errorf("tool %q: %w", d.Name, err))
			continue
		}
		out[i], have[i] = v, true
		fresh[d.Name] = cached[T]{desc: d.Description, params: d.Parameters, strict: d.Strict, deferred: d.Deferred, v: v}
	}
	if len(fresh) > 0 {
		c.mu.Lock()
		if c.m == nil || len(c.m)+len(fresh) > 2*len(defs)+256 {
			// Drop the conversions of tools that are gone.
			keep := make(map[string]cached[T], len(defs))
			for _, d := range defs {
				if e, ok := c.m[d.Name]; ok {
					keep[d.Name] = e
				}
			}
			c.m = keep
		}
		for name, e := range fresh {
			c.m[name] = e
		}
		c.mu.Unlock()
	}
	if len(errList) == 0 {
		return out, nil
	}
	kept := out[:0]
	for i := range out {
		if have[i] {
			kept = append(kept, out[i])
		}
	}
	return kept, errors.Join(errList...)
}

// Encoded is a provider's tool object as model.EncodeTool writes it, split
// into its top-level members, so that an adapter can fill an SDK's typed
// fields without decoding (and rounding) the schema.
type Encoded map[string]json.RawMessage

// Encode encodes d in format f and splits the result.
func Encode(f model.Format, d model.Definition) (Encoded, error) {
	b, err := model.EncodeTool(f, d)
	if err != nil {
		return nil, err
	}
	return split(b)
}

// split splits a JSON object into its members (nil for JSON null).
func split(raw json.RawMessage) (Encoded, error) {
	var e Encoded
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	return e, nil
}

// Object returns member key, itself an object, split into its members.
func (e Encoded) Object(key string) (Encoded, error) {
	raw, ok := e[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	o, err := split(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return o, nil
}

// String returns member key as a string ("" when absent).
func (e Encoded) String(key string) string {
	var s string
	_ = json.Unmarshal(e[key], &s)
	return s
}

// Bool returns member key as a boolean (false when absent).
func (e Encoded) Bool(key string) bool {
	var b bool
	_ = json.Unmarshal(e[key], &b)
	return b
}

// Any returns the members as a map whose values are the raw JSON of each
// member: an SDK that marshals a map[string]any writes them unchanged.
func (e Encoded) Any() map[string]any {
	m := make(map[string]any, len(e))
	for k, v := range e {
		m[k] = v
	}
	return m
}

// Function is a function tool as the OpenAI formats encode it: the
// members of a Chat Completions tool's "function" object, which are those
// of a Responses tool itself. Adapters built on OpenAI-style function
// definitions read their fields from it.
type Function struct {
	Name        string
	Description string
	// Parameters is the JSON Schema object of the parameters, as encoded.
	Parameters json.RawMessage
	Strict     bool
}

// OpenAIFunction encodes d in format f ([model.OpenAIChat] or
// [model.OpenAIResponses]) and reads the function's members.
func OpenAIFunction(f model.Format, d model.Definition) (Function, error) {
	e, err := Encode(f, d)
	if err == nil && f == model.OpenAIChat {
		e, err = e.Object("function")
	}
	if err != nil {
		return Function{}, err
	}
	return Function{
		Name:        e.String("name"),
		Description: e.String("description"),
		Parameters:  e["parameters"],
		Strict:      e.Bool("strict"),
	}, nil
}

// ParameterMembers returns the parameters' schema split into its members,
// as a map an SDK that marshals a map[string]any writes unchanged (see
// [Encoded.Any]); it is empty when there are none.
func (f Function) ParameterMembers() (map[string]any, error) {
	if len(f.Parameters) == 0 {
		return map[string]any{}, nil
	}
	e, err := split(f.Parameters)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	return e.Any(), nil
}

// Part is one piece of a tool result: text, or media bytes with their
// MIME type.
type Part struct {
	// Text is the text of a text part.
	Text string
	// MIME and Data are the type and bytes of a media part.
	MIME string
	Data []byte
	// Name names a media part's source (the output's name or URI), for
	// providers that want a file name (see [Part.FileName]).
	Name string
}

// IsMedia reports whether p is a media part.
func (p Part) IsMedia() bool { return p.Data != nil }

// FileName returns a file name for a media part: the last element of its
// name, with the extension of its type added when it has none of its own
// ("report" of a PDF is "report.pdf"); "document.pdf" and the like when
// the part has no name.
func (p Part) FileName() string {
	name := p.Name
	if u, err := url.Parse(name); err == nil && u.Scheme != "" {
		name = u.Path
	}
	name = path.Base(strings.TrimRight(name, "/"))
	if name == "." || name == "/" || name == "" {
		name = "document"
	}
	if path.Ext(name) == "" {
		if exts, _ := mime.ExtensionsByType(p.MIME); len(exts) > 0 {
			name += exts[0]
		} else if i := strings.IndexByte(p.MIME, '/'); i > 0 {
			name += "." + p.MIME[i+1:]
		}
	}
	return name
}

// Media tells which media a provider takes inline in the place a result
// goes.
type Media struct {
	// Types lists the accepted MIME types ("image/png", ...).
	Types []string
	// MaxBytes bounds one media part of those types; larger ones are
	// described instead.
	MaxBytes int
	// Documents lists further accepted types, each with its own bound
	// (PDF documents, which a provider takes larger than images).
	Documents map[string]int
}

// PDF is the MIME type of PDF documents.
const PDF = "application/pdf"

// WebImages returns the image types every model API here accepts in a
// tool result (PNG, JPEG, GIF, WebP), up to maxBytes each.
func WebImages(maxBytes int) Media {
	return Media{Types: []string{"image/png", "image/jpeg", "image/gif", "image/webp"}, MaxBytes: maxBytes}
}

// WithPDF returns m also accepting PDF documents up to maxBytes each.
func (m Media) WithPDF(maxBytes int) Media {
	docs := make(map[string]int, len(m.Documents)+1)
	for t, n := range m.Documents {
		docs[t] = n
	}
	docs[PDF] = maxBytes
	m.Documents = docs
	return m
}

// limit returns the bound of media of type mt; ok is false when mt is not
// accepted at all.
func (m Media) limit(mt string) (maxBytes int, ok bool) {
	if n, ok := m.Documents[mt]; ok {
		return n, true
	}
	if slices.Contains(m.Types, mt) {
		return m.MaxBytes, true
	}
	return 0, false
}

// accepts reports whether media of type mt and n bytes can be sent.
func (m Media) accepts(mt string, n int) bool {
	maxBytes, ok := m.limit(mt)
	return ok && (maxBytes <= 0 || n <= maxBytes)
}

// Parts splits a result into what the model reads: the error message of a
// failed call; the text or JSON of a text output; for a binary output that
// m accepts, the description model.Result gives it followed by the bytes;
// for any other binary output a text that says what it was and that it is
// not shown. An output made of MCP content blocks (a remote tool's mix of
// text and images) is split block by block the same way when it holds any
// media, and so is an bridge.ToolContent a builtin returns, whose blocks are
// what the tool meant the model to read. An output that carries both
// content blocks and a structured value (an MCP tool's content and
// structuredContent) gives both: the blocks first, as written for the
// model, then the structured value's JSON (see [StructuredParts]).
func Parts(ctx context.Context, r model.Result, m Media) []Part {
	if r.IsError || r.Resource == nil {
		return []Part{{Text: r.Content}}
	}
	if sc, ok := r.Resource.(bridge.StructuredCarrier); ok {
		if v := sc.MCPStructuredContent(); v != nil {
			return StructuredParts(r.Resource, v, m)
		}
	}
	if cc, ok := r.Resource.(bridge.ContentCarrier); ok && (carriesMedia(r) || r.Resource.Type() == bridge.ToolContentType) {
		return blockParts(cc.MCPContent(), m)
	}
	if !r.Binary {
		return []Part{{Text: r.Content}}
	}
	data, err := r.Resource.Read(ctx)
	if err != nil {
		return []Part{{Text: fmt.Sprintf("[output %q could not be read: %v]", resName(r), err)}}
	}
	mt := mediaType(r.Resource.Type())
	if !m.accepts(mt, len(data)) {
		return []Part{{Text: notShown(mt, resName(r), len(data), m)}}
	}
	return []Part{{Text: r.Content}, {MIME: mt, Data: data, Name: resName(r)}}
}

// StructuredParts returns the parts of an output whose structured value
// is v: its content blocks (as [Parts] splits them) then v's JSON. A text
// block that is v's JSON itself (as the MCP specification advises servers
// to add for older clients) is left out, so the JSON comes once.
func StructuredParts(res toolkit.Resource, v any, m Media) []Part {
	js, err := json.Marshal(v)
	if err != nil {
		js = []byte(fmt.Sprintf("[structured output that is not JSON: %v]", err))
	}
	var blocks []sdk.Content
	if cc, ok := res.(bridge.ContentCarrier); ok {
		for _, b := range cc.MCPContent() {
			if t, ok := b.(*sdk.TextContent); ok && sameJSON(t.Text, js) {
				continue
			}
			blocks = append(blocks, b)
		}
	}
	var out []Part
	if len(blocks) > 0 {
		out = blockParts(blocks, m)
	}
	return append(out, Part{Text: string(js)})
}

// sameJSON reports whether text is a JSON document equal to js, an
// object.
func sameJSON(text string, js []byte) bool {
	if t := strings.TrimSpace(text); !strings.HasPrefix(t, "{") {
		return false
	}
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil || json.Unmarshal(js, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// Text returns r as text for models that take only text in a tool result:
// its parts (media described, see [Parts]) one per line.
func Text(ctx context.Context, r model.Result) string {
	var b strings.Builder
	for i, p := range Parts(ctx, r, Media{}) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// carriesMedia reports whether r's output is MCP content with a media
// block in it.
func carriesMedia(r model.Result) bool {
	cc, ok := r.Resource.(bridge.ContentCarrier)
	if !ok {
		return false
	}
	for _, b := range cc.MCPContent() {
		switch v := b.(type) {
		case *sdk.ImageContent, *sdk.AudioContent:
			return true
		case *sdk.EmbeddedResource:
			if v.Resource != nil && v.Resource.Blob != nil {
				return true
			}
		}
	}
	return false
}

// blockParts maps MCP content blocks to parts.
func blockParts(blocks []sdk.Content, m Media) []Part {
	var out []Part
	media := func(mt string, data []byte, name string) {
		mt = mediaType(mt)
		if m.accepts(mt, len(data)) {
			out = append(out, Part{MIME: mt, Data: data, Name: name})
		} else {
			out = append(out, Part{Text: notShown(mt, name, len(data), m)})
		}
	}
	for _, b := range blocks {
		switch v := b.(type) {
		case *sdk.TextContent:
			out = append(out, Part{Text: v.Text})
		case *sdk.ImageContent:
			media(v.MIMEType, v.Data, "image")
		case *sdk.AudioContent:
			media(v.MIMEType, v.Data, "audio")
		case *sdk.EmbeddedResource:
			switch rc := v.Resource; {
			case rc == nil:
			case rc.Blob != nil:
				media(rc.MIMEType, rc.Blob, rc.URI)
			default:
				out = append(out, Part{Text: rc.Text})
			}
		case *sdk.ResourceLink:
			out = append(out, Part{Text: fmt.Sprintf("[resource %q: %s]", v.Name, v.URI)})
		default:
			j, err := json.Marshal(b)
			if err != nil {
				continue
			}
			out = append(out, Part{Text: string(j)})
		}
	}
	if len(out) == 0 {
		out = append(out, Part{Text: "(no output)"})
	}
	return out
}

// notShown describes media that cannot be sent.
func notShown(mt, name string, n int, m Media) string {
	kind := "binary"
	if i := strings.IndexByte(mt, '/'); i > 0 {
		switch k := mt[:i]; k {
		case "image", "audio", "video":
			kind = k
		}
	}
	if mt == "" {
		mt = "unknown type"
	}
	why := "this model does not accept " + mt + " here"
	if maxBytes, ok := m.limit(mt); ok && maxBytes > 0 && n > maxBytes {
		why = fmt.Sprintf("larger than the %d bytes this model accepts", maxBytes)
	}
	return fmt.Sprintf("[%s output %q: %s, %d bytes; not shown: %s]", kind, name, mt, n, why)
}

func resName(r model.Result) string {
	if n := r.Resource.Name(); n != "" {
		return n
	}
	return r.Resource.URI()
}

// mediaType returns the lower-cased type and subtype of a MIME type,
// without parameters.
func mediaType(s string) string {
	if mt, _, err := mime.ParseMediaType(s); err == nil {
		return mt
	}
	return strings.ToLower(strings.TrimSpace(s))
}

// ToolCall builds a model.ToolCall. Arguments that are empty or JSON null
// (an SDK's zero value, a model calling a function without parameters)
// mean no arguments: "{}".
func ToolCall(id, name string, args []byte) model.ToolCall {
	a := string(bytes.TrimSpace(args))
	if a == "" || a == "null" {
		a = "{}"
	}
	return model.ToolCall{ID: id, Name: name, Arguments: a}
}
