package adapt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/resource"
)

var png = Media{Types: []string{"image/png"}, MaxBytes: 10}

func result(t *testing.T, r toolkit.Resource) model.Result {
	t.Helper()
	// Run the output through a real dispatcher so that the Result is the
	// one adapters see.
	tk, err := toolkit.New(toolkit.WithTool(&outTool{res: r}))
	if err != nil {
		t.Fatal(err)
	}
	cat := model.NewCatalog(tk)
	if err := cat.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return model.NewDispatcher(tk, cat).Call(context.Background(), model.ToolCall{ID: "1", Name: "out", Arguments: "{}"})
}

func TestParts(t *testing.T) {
	ctx := context.Background()
	img := []byte("\x89PNG\r\n\x1a\n")
	blob := func(mt string, data []byte) toolkit.Resource {
		r, err := resource.Blob("out", mt, data)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name string
		res  toolkit.Resource
		want string
	}{
		{"text", resource.Must("out", "hello"), "hello"},
		{"json", resource.Must("out", []byte(`{"a":1}`)), `{"a":1}`},
		{"image", blob("image/png", img), `[image output "out": image/png, 8 bytes; attached separately]|<image/png 8>`},
		{"image with parameters", blob("IMAGE/PNG; x=y", img), `|<image/png 8>`},
		{"unsupported image", blob("image/tiff", img), `[image output "out": image/tiff, 8 bytes; not shown: this model does not accept image/tiff here]`},
		{"too large", blob("image/png", make([]byte, 11)), `not shown: larger than the 10 bytes`},
		{"audio", blob("audio/wav", img), `[audio output "out": audio/wav, 8 bytes; not shown`},
		{"mixed MCP content", bridge.NewToolContent(
			&sdk.TextContent{Text: "a chart:"},
			&sdk.ImageContent{MIMEType: "image/png", Data: img},
			&sdk.ImageContent{MIMEType: "image/gif", Data: img},
			&sdk.ResourceLink{Name: "doc", URI: "file:///doc"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///t", Text: "embedded"}},
		), `a chart:|<image/png 8>|[image output "image": image/gif, 8 bytes; not shown: this model does not accept image/gif here]|[resource "doc": file:///doc]|embedded`},
		{"MCP text only", bridge.NewToolContent(&sdk.TextContent{Text: "x"}, &sdk.TextContent{Text: "y"}), `x|y`},
		{"text and structured content", &bridge.ToolContent{Content: []sdk.Content{&sdk.TextContent{Text: "3 matches"}},
			Structured: map[string]any{"n": 3}}, `3 matches|{"n":3}`},
		{"structured content and its JSON as text", &bridge.ToolContent{Content: []sdk.Content{&sdk.TextContent{Text: ` { "n" : 3 } `}},
			Structured: map[string]any{"n": 3}}, `{"n":3}`},
		{"structured content alone", &bridge.ToolContent{Structured: map[string]any{"n": 3}}, `{"n":3}`},
		{"structured content with an image", &bridge.ToolContent{Content: []sdk.Content{&sdk.TextContent{Text: "see"},
			&sdk.ImageContent{MIMEType: "image/png", Data: img}}, Structured: []int{1}}, `see|<image/png 8>|[1]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := result(t, c.res)
			if r.IsError {
				t.Fatalf("call failed: %s", r.Content)
			}
			var got []string
			for _, p := range Parts(ctx, r, png) {
				if p.IsMedia() {
					got = append(got, fmt.Sprintf("<%s %d>", p.MIME, len(p.Data)))
				} else {
					got = append(got, p.Text)
				}
			}
			s := strings.Join(got, "|")
			if !strings.Contains(s, c.want) || strings.HasPrefix(c.name, "structured") && s != c.want {
				t.Errorf("parts = %s\nwant %s", s, c.want)
			}
		})
	}
}

func TestPartsOfError(t *testing.T) {
	r := model.Result{ID: "1", IsError: true, Content: "it failed", Err: errors.New("x")}
	if p := Parts(context.Background(), r, png); len(p) != 1 || p[0].Text != "it failed" {
		t.Errorf("parts = %+v", p)
	}
}

func TestCache(t *testing.T) {
	var c Cache[string]
	n := 0
	conv := func(d model.Definition) (string, error) {
		n++
		if d.Name == "bad" {
			return "", errors.New("cannot")
		}
		return fmt.Sprintf("%s#%d", d.Name, n), nil
	}
	defs := []model.Definition{
		{Name: "a", Parameters: []byte(`{"type":"object"}`)},
		{Name: "bad"},
		{Name: "b", Description: "B", Parameters: []byte(`{"type":"object"}`)},
	}
	got, err := c.Convert(defs, conv)
	if err == nil || !strings.Contains(err.Error(), `tool "bad"`) || strings.Join(got, ",") != "a#1,b#3" {
		t.Fatalf("first = %v, %v", got, err)
	}
	// Unchanged definitions are not converted again; a changed one is.
	defs[2].Description = "B2"
	defs[0].Parameters = []byte(`{"type":"object"}`) // equal bytes, another slice
	got, _ = c.Convert(defs, conv)
	if strings.Join(got, ",") != "a#1,b#5" {
		t.Fatalf("second = %v", got)
	}
	defs[0].Strict = true
	got, _ = c.Convert(defs[:1], conv)
	if strings.Join(got, ",") != "a#6" {
		t.Fatalf("strict changed = %v", got)
	}
}

// Stale conversions are dropped once the tools they stood for are gone.
func TestCacheBounded(t *testing.T) {
	var c Cache[int]
	conv := func(model.Definition) (int, error) { return 1, nil }
	for round := range 50 {
		defs := make([]model.Definition, 10)
		for i := range defs {
			defs[i] = model.Definition{Name: fmt.Sprintf("t%d_%d", round, i)}
		}
		if _, err := c.Convert(defs, conv); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > 2*10+256+10 {
		t.Errorf("cache holds %d conversions", n)
	}
}

func TestCacheConcurrent(t *testing.T) {
	var c Cache[string]
	defs := []model.Definition{{Name: "a"}, {Name: "b"}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := c.Convert(defs, func(d model.Definition) (string, error) { return d.Name, nil })
			if err != nil || strings.Join(got, ",") != "a,b" {
				t.Errorf("got %v, %v", got, err)
			}
		})
	}
	wg.Wait()
}

func TestToolCall(t *testing.T) {
	for in, want := range map[string]string{"": "{}", "null": "{}", " {\"a\":1} ": `{"a":1}`} {
		if got := ToolCall("i", "n", []byte(in)).Arguments; got != want {
			t.Errorf("ToolCall(%q) = %q, want %q", in, got, want)
		}
	}
}

// A Converter converts the filtered definitions with its conversion, once
// per definition while it is unchanged, and returns what it converted
// together with the conversion's errors; NewCore applies the options.
func TestConverter(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(&outTool{res: resource.Must("out", "x")}))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	c := NewCore(tk, adapter.WithOnResult(func(_ context.Context, r model.Result) { seen = append(seen, r.Name) }))
	calls := 0
	conv := NewConverter(c, func(_ *Core, d model.Definition) (string, error) {
		calls++
		return "converted " + d.Name, nil
	})
	for range 2 {
		got, err := conv.Current(ctx)
		if err != nil || len(got) != 1 || got[0] != "converted out" {
			t.Fatalf("Current = %v, %v; want [converted out]", got, err)
		}
	}
	if calls != 1 {
		t.Errorf("the conversion ran %d times for an unchanged definition, want 1", calls)
	}
	defs, err := c.Definitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := conv.Of(defs); err != nil || len(got) != 1 || got[0] != "converted out" {
		t.Errorf("Of = %v, %v; want [converted out]", got, err)
	}
	if rs := c.Dispatch(ctx, []model.ToolCall{ToolCall("1", "out", nil)}); len(rs) != 1 || rs[0].IsError {
		t.Fatalf("Dispatch = %+v", rs)
	}
	if len(seen) != 1 || seen[0] != "out" {
		t.Errorf("OnResult saw %v, want [out]", seen)
	}

	errConv := errors.New("conversion failed")
	failing := NewConverter(c, func(*Core, model.Definition) (string, error) { return "", errConv })
	if got, err := failing.Current(ctx); !errors.Is(err, errConv) || !strings.Contains(err.Error(), `"out"`) || len(got) != 0 {
		t.Errorf("Current = %v, %v; want nothing and the conversion's error naming the tool", got, err)
	}

	c = NewCore(tk, adapter.WithFilter(model.Filter{Names: []string{"none"}}))
	got, err := NewConverter(c, func(*Core, model.Definition) (string, error) { return "", errConv }).Current(ctx)
	if err != nil || len(got) != 0 {
		t.Errorf("Current with a filter that keeps nothing = %v, %v", got, err)
	}
}

// OpenAIFunction reads the same members from both OpenAI encodings.
func TestOpenAIFunction(t *testing.T) {
	d := model.Definition{
		Name:        "f",
		Description: "Does f.",
		Parameters:  []byte(`{"type":"object","properties":{"n":{"type":"number","minimum":0.1}}}`),
		Strict:      true,
	}
	chat, err := OpenAIFunction(model.OpenAIChat, d)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := OpenAIFunction(model.OpenAIResponses, d)
	if err != nil {
		t.Fatal(err)
	}
	if chat.Name != "f" || chat.Description != "Does f." || !chat.Strict || len(chat.Parameters) == 0 {
		t.Errorf("OpenAIChat: %+v", chat)
	}
	if chat.Name != resp.Name || chat.Description != resp.Description || chat.Strict != resp.Strict ||
		string(chat.Parameters) != string(resp.Parameters) {
		t.Errorf("OpenAIChat %+v and OpenAIResponses %+v differ", chat, resp)
	}
	m, err := chat.ParameterMembers()
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := m["properties"].(json.RawMessage); !ok || !strings.Contains(string(p), "0.1") {
		t.Errorf("ParameterMembers = %v; want the raw members", m)
	}
	if m, err := (Function{}).ParameterMembers(); err != nil || m == nil || len(m) != 0 {
		t.Errorf("ParameterMembers without parameters = %v, %v; want an empty map", m, err)
	}
	if _, err := OpenAIFunction(model.OpenAIChat, model.Definition{Name: "not a name"}); err == nil {
		t.Error("OpenAIFunction accepted a name that is not model-safe")
	}
}

func TestText(t *testing.T) {
	img := []byte("\x89PNG\r\n\x1a\n")
	r := result(t, bridge.NewToolContent(
		&sdk.TextContent{Text: "a chart:"},
		&sdk.ImageContent{MIMEType: "image/png", Data: img},
	))
	want := "a chart:\n[image output \"image\": image/png, 8 bytes; not shown: this model does not accept image/png here]"
	if got := Text(context.Background(), r); got != want {
		t.Errorf("Text = %q\nwant %q", got, want)
	}
}

func TestWebImages(t *testing.T) {
	m := WebImages(10)
	for _, mt := range []string{"image/png", "image/jpeg", "image/gif", "image/webp"} {
		if !m.accepts(mt, 10) {
			t.Errorf("WebImages does not accept %s", mt)
		}
	}
	if m.accepts("image/png", 11) || m.accepts("image/tiff", 1) {
		t.Error("WebImages accepts a part beyond its limit or type")
	}
}

// TestConverterViews checks the Disclosed views of a core: each view's
// search tool is converted with the view's own core (its calls load into
// the view's Loaded) and once per view; the other tools are converted
// once for all views and the adapter, with the adapter's core; a search
// in one view loads nothing into another.
func TestConverterViews(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(&outTool{res: resource.Must("out", "x")}))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCore(tk, adapter.WithDisclosure(model.WithAlways(model.Filter{Names: []string{"none"}})))
	type value struct {
		name string
		core *Core
	}
	conversions := map[string]int{}
	var mu sync.Mutex
	conv := NewConverter(c, func(core *Core, d model.Definition) (value, error) {
		mu.Lock()
		conversions[d.Name]++
		mu.Unlock()
		return value{d.Name, core}, nil
	})
	if all, err := conv.Current(ctx); err != nil || len(all) != 1 || all[0].name != "out" || all[0].core != c {
		t.Fatalf("the adapter's tools: %v, %v", all, err)
	}

	var la, lb model.Loaded
	a, b := c.Disclosed(&la), c.Disclosed(&lb)
	ca, cb := conv.For(a), conv.For(b)
	for range 2 {
		got, err := ca.Current(ctx)
		if err != nil || len(got) != 1 || got[0].name != model.DefaultSearchToolName || got[0].core != a {
			t.Fatalf("view a before a search: %v, %v", got, err)
		}
	}
	if rs := a.Dispatch(ctx, []model.ToolCall{ToolCall("1", model.DefaultSearchToolName, []byte(`{"query":"out"}`))}); len(rs) != 1 || rs[0].IsError {
		t.Fatalf("search: %+v", rs)
	}
	got, err := ca.Current(ctx)
	if err != nil || len(got) != 2 || got[1].name != "out" || got[1].core != c {
		t.Fatalf("view a after its search: %v, %v", got, err)
	}
	if got, err := cb.Current(ctx); err != nil || len(got) != 1 || got[0].core != b {
		t.Errorf("view b after a's search: %v, %v", got, err)
	}
	if len(lb.Names()) != 0 {
		t.Errorf("b loaded %v", lb.Names())
	}
	if conversions["out"] != 1 || conversions[model.DefaultSearchToolName] != 2 {
		t.Errorf("conversions %v, want out once and the search tool once per view", conversions)
	}
}

// TestDisclosedFilter checks that a view's search finds only the tools
// the adapter's filter keeps, unless the disclosure says otherwise.
func TestDisclosedFilter(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(&outTool{res: resource.Must("out", "x")}))
	if err != nil {
		t.Fatal(err)
	}
	search := []model.ToolCall{ToolCall("1", model.DefaultSearchToolName, []byte(`{"query":"out"}`))}
	hidden := model.Filter{Exclude: []string{"out"}}
	var l model.Loaded
	NewCore(tk, adapter.WithFilter(hidden)).Disclosed(&l).Dispatch(ctx, search)
	if len(l.Names()) != 0 {
		t.Errorf("the search found %v, which the filter leaves out", l.Names())
	}
	NewCore(tk, adapter.WithFilter(hidden), adapter.WithDisclosure(model.WithSearchable(model.Filter{}))).Disclosed(&l).Dispatch(ctx, search)
	if got := l.Names(); len(got) != 1 || got[0] != "out" {
		t.Errorf("with WithSearchable the search found %v", got)
	}
}
