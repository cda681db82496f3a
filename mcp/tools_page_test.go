package mcp

import (
	"encoding/json"
	"testing"
)

// The connector takes a page's tools out of a tools/list answer: the
// go-sdk decodes an answer with no tools and the same nextCursor, and the
// slot holds the tools, each the JSON the server sent.
func TestTakeAnswer(t *testing.T) {
	slot := &taskSlot{}
	out, ok := slot.takeAnswer([]byte(`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"a":1},"tools":[ {"name":"a"} ,
		{"name":5},"x"],"nextCursor":"c2"}}`))
	if !ok {
		t.Fatal("the answer was not taken")
	}
	var msg struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	mustNotErr(t, json.Unmarshal(out, &msg))
	if msg.ID != 3 || string(msg.Result) != `{"tools":[],"nextCursor":"c2"}` {
		t.Errorf("handed on %s", out)
	}
	tools, taken := slot.page()
	if !taken || len(tools) != 3 {
		t.Fatalf("taken %v, %d tools", taken, len(tools))
	}
	for i, want := range []string{`{"name":"a"}`, `{"name":5}`, `"x"`} {
		if string(tools[i].raw) != want || tools[i].index != i {
			t.Errorf("tool %d: %q (index %d), want %q", i, tools[i].raw, tools[i].index, want)
		}
	}
	if tools[0].decode(); tools[0].def == nil || tools[0].def.Name != "a" {
		t.Errorf("tool 0: %+v", tools[0])
	}
	if tools[1].decode(); tools[1].def != nil || tools[1].undecoded == "" {
		t.Errorf("tool 1: %+v", tools[1])
	}

	// Not an answer with a page: nothing taken.
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":4,"result":{"tools":{}}}`,
	} {
		slot := &taskSlot{}
		slot.takeAnswer([]byte(in))
		if _, taken := slot.page(); taken {
			t.Errorf("%s: taken", in)
		}
	}
}
