package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/resource"
)

type failingResource struct{ staticResource }

func (failingResource) Read(context.Context) ([]byte, error) { return nil, errors.New("gone") }

func TestServerContentMapping(t *testing.T) {
	ctx := context.Background()
	res := func(typ string, data string) resource.Resource {
		return &staticResource{uri: "file:///x", name: "x", typ: typ, data: []byte(data)}
	}
	tests := []struct {
		name       string
		in         resource.Resource
		structured bool
		want       string // JSON of the result
	}{
		{"nil", nil, false, `{"content":[]}`},
		{"text", res("text/plain; charset=utf-8", "hi"), false, `{"content":[{"type":"text","text":"hi"}]}`},
		{"markdown", res("text/markdown", "# h"), false, `{"content":[{"type":"text","text":"# h"}]}`},
		{"untyped text", res("", "hi"), false, `{"content":[{"type":"text","text":"hi"}]}`},
		{"json", res("application/json", `{"a":1}`), false, `{"content":[{"type":"text","text":"{\"a\":1}"}]}`},
		{"json structured", res("application/json", `{"a":1}`), true, `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`},
		{"invalid json structured", res("application/json", `{`), true, `{"content":[{"type":"text","text":"{"}]}`},
		{"image", res("image/png", "\x89P"), false, `{"content":[{"type":"image","mimeType":"image/png","data":"iVA="}]}`},
		{"audio", res("audio/wav", "RI"), false, `{"content":[{"type":"audio","mimeType":"audio/wav","data":"Ukk="}]}`},
		{"xml", res("application/xml", "<a/>"), false, `{"content":[{"type":"resource","resource":{"uri":"file:///x","mimeType":"application/xml","text":"\u003ca/\u003e"}}]}`},
		{"binary", res("application/zip", "PK\xff"), false, `{"content":[{"type":"resource","resource":{"uri":"file:///x","mimeType":"application/zip","blob":"UEv/"}}]}`},
		{"untyped binary", res("", "\xff\xfe"), false, `{"content":[{"type":"resource","resource":{"uri":"file:///x","mimeType":"application/octet-stream","blob":"//4="}}]}`},
		{"invalid utf-8 text", res("text/plain", "\xff"), false, `{"content":[{"type":"resource","resource":{"uri":"file:///x","mimeType":"text/plain","blob":"/w=="}}]}`},
		{"blocks", &bridge.ToolContent{Content: []sdk.Content{&sdk.TextContent{Text: "a"}}, Structured: map[string]int{"n": 1}}, false,
			`{"content":[{"type":"text","text":"a"}],"structuredContent":{"n":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := toolResult(ctx, tt.in, tt.structured)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := toolResult(ctx, &failingResource{}, false); err == nil {
		t.Error("a failing read must be an error")
	}
	data, err := bridge.NewToolContent(&sdk.TextContent{Text: "a"}).Read(ctx)
	if err != nil || string(data) != `[{"type":"text","text":"a"}]` {
		t.Errorf("bridge.ToolContent.Read: %s %v", data, err)
	}
}

func FuzzServerContentMapping(f *testing.F) {
	f.Add("text/plain", []byte("hi"), true)
	f.Add("application/json; charset=utf-8", []byte(`{"a":[1]}`), true)
	f.Add("image/png;;", []byte{0}, false)
	f.Add("\x00/\xff", []byte{0xff}, false)
	f.Fuzz(func(t *testing.T, typ string, data []byte, structured bool) {
		r, err := toolResult(context.Background(), &staticResource{uri: "x:y", typ: typ, data: data}, structured)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Content) != 1 {
			t.Fatalf("want one block, got %d", len(r.Content))
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("result does not marshal: %v", err)
		}
	})
}

func TestServerTraceMeta(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := bridge.ExtractTraceMeta(context.Background(), map[string]any{"traceparent": tp, "tracestate": "k=v"})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsRemote() || sc.TraceState().Get("k") != "v" {
		t.Fatalf("extracted %+v", sc)
	}
	meta := map[string]any{"other": 1}
	bridge.InjectTraceMeta(ctx, meta)
	if meta["traceparent"] != tp || meta["tracestate"] != "k=v" || meta["other"] != 1 {
		t.Errorf("injected %v", meta)
	}
	bridge.InjectTraceMeta(ctx, nil) // no panic
	for _, bad := range []map[string]any{nil, {}, {"traceparent": 7}, {"traceparent": "garbage"}} {
		if sc := trace.SpanContextFromContext(bridge.ExtractTraceMeta(context.Background(), bad)); sc.IsValid() {
			t.Errorf("%v: got a span context", bad)
		}
	}
	empty := map[string]any{}
	bridge.InjectTraceMeta(context.Background(), empty)
	if len(empty) != 0 {
		t.Errorf("no span: injected %v", empty)
	}
}
