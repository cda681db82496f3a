package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/llmkit/toolkit/mcp/internal/wire/wiretest"
)

// sseEvent is an event as the go-sdk reads it from a stream.
type sseEvent struct {
	id, name, data string
	hasData        bool
}

// parseSSE reads events the way the go-sdk's client does: lines end with
// '\n' (a '\r' before it is dropped), a blank line ends an event, data
// values are trimmed and joined by '\n', the last event ends with the
// stream.
func parseSSE(b []byte) []sseEvent {
	var out []sseEvent
	var ev sseEvent
	var data []string
	end := func() {
		if data != nil {
			ev.data, ev.hasData = strings.Join(data, "\n"), true
		}
		if ev != (sseEvent{}) {
			out = append(out, ev)
		}
		ev, data = sseEvent{}, nil
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			end()
			continue
		}
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		switch string(k) {
		case "id":
			ev.id = strings.TrimSpace(string(v))
		case "event":
			ev.name = strings.TrimSpace(string(v))
		case "data":
			data = append(data, string(bytes.TrimSpace(v)))
		}
	}
	end()
	return out
}

// tagAll runs in through a TagStream, reading chunk bytes at a time (all
// at once when chunk is 0).
func tagAll(t testing.TB, in []byte, chunk int, max int) []byte {
	t.Helper()
	var src io.Reader = bytes.NewReader(in)
	if chunk > 0 {
		src = &wiretest.ChunkReader{B: in, N: chunk}
	}
	ts := NewTagStream(io.NopCloser(src), "T", max)
	out, err := io.ReadAll(iotest.OneByteReader(ts))
	if chunk == 0 {
		ts = NewTagStream(io.NopCloser(bytes.NewReader(in)), "T", max)
		out, err = io.ReadAll(ts)
	}
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	return out
}

// metaTag returns the call tag in the params' _meta of a request.
func metaTag(t testing.TB, data string) string {
	t.Helper()
	var m struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data %q: %v", data, err)
	}
	s, _ := m.Params.Meta[CallMetaKey].(string)
	return s
}

func TestTagStream(t *testing.T) {
	big := strings.Repeat("x", 3*classifyPrefix)
	sampling := `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"maxTokens":5,"messages":[]}}`
	for _, tc := range []struct {
		name   string
		in     string
		tagged []bool // per event of the output: whether it carries the tag
	}{
		{"sampling", "id: 1\ndata: " + sampling + "\n\n", []bool{true}},
		{"crlf", "id: 1\r\ndata: " + sampling + "\r\n\r\n", []bool{true}},
		{"elicitation with meta", `data: {"jsonrpc":"2.0","id":"a","method":"elicitation/create","params":{"_meta":{"k":1},"message":"<q>"}}` + "\n\n", []bool{true}},
		{"roots without params", `data: {"jsonrpc":"2.0","id":3,"method":"roots/list"}` + "\n\n", []bool{true}},
		{"roots with null params", `data: {"jsonrpc":"2.0","id":3,"method":"roots/list","params":null}` + "\n\n", []bool{true}},
		{"large request", `data: {"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{"maxTokens":5,"messages":[{"role":"user","content":{"type":"text","text":"` + big + `"}}]}}` + "\n\n", []bool{true}},
		{"split data lines", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"method\":\"roots/list\"}\n\n", []bool{true}},
		{"notification", `data: {"jsonrpc":"2.0","method":"roots/list"}` + "\n\n", []bool{false}},
		{"response quoting the method", `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"sampling/createMessage\""}]}}` + "\n\n", []bool{false}},
		{"other request", `data: {"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n\n", []bool{false}},
		{"escaped slash", `data: {"jsonrpc":"2.0","id":1,"method":"roots\/list"}` + "\n\n", []bool{true}},
		{"method as a prefix", `data: {"jsonrpc":"2.0","id":1,"method":"roots/listing"}` + "\n\n", []bool{false}},
		{"large result", `data: {"jsonrpc":"2.0","id":1,"result":{"text":"` + big + `"}}` + "\n\n", []bool{false}},
		{"progress then request then result",
			`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":1}}` + "\n\n" +
				": a comment\nevent: message\ndata: " + sampling + "\nid: 9\n\n" +
				`data: {"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n",
			[]bool{false, true, false}},
		{"invalid json", "data: {\"method\":\"roots/list\",\n\n", []bool{false}},
		{"unterminated", "data: " + sampling, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			want := parseSSE(in)
			for _, chunk := range []int{0, 1, 7, 600} {
				out := tagAll(t, in, chunk, 1<<20)
				got := parseSSE(out)
				if len(got) != len(want) || len(got) != len(tc.tagged) {
					t.Fatalf("chunk %d: %d events out of %d in, want %d\nout %q", chunk, len(got), len(want), len(tc.tagged), out)
				}
				for i, g := range got {
					w := want[i]
					if g.id != w.id || g.name != w.name {
						t.Errorf("chunk %d: event %d: id %q name %q, want %q %q", chunk, i, g.id, g.name, w.id, w.name)
					}
					if !tc.tagged[i] {
						if g.data != w.data {
							t.Errorf("chunk %d: event %d changed: %q, want %q", chunk, i, g.data, w.data)
						}
						continue
					}
					if tag := metaTag(t, g.data); tag != "T" {
						t.Errorf("chunk %d: event %d: tag %q in %q", chunk, i, tag, g.data)
					}
					// Apart from the tag, the message is the same.
					var a, b map[string]any
					if err := json.Unmarshal([]byte(g.data), &a); err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal([]byte(w.data), &b); err != nil {
						t.Fatal(err)
					}
					p, _ := a["params"].(map[string]any)
					meta := p["_meta"].(map[string]any)
					delete(meta, CallMetaKey)
					if len(meta) == 0 {
						delete(p, "_meta")
					}
					if bp, _ := b["params"].(map[string]any); len(p) == 0 && len(bp) == 0 {
						delete(a, "params")
						delete(b, "params")
					}
					ja, _ := json.Marshal(a)
					jb, _ := json.Marshal(b)
					if !bytes.Equal(ja, jb) {
						t.Errorf("chunk %d: event %d: %s, want %s", chunk, i, ja, jb)
					}
				}
				if !slicesContainsTrue(tc.tagged) && !bytes.Equal(out, in) {
					t.Errorf("chunk %d: untouched stream changed:\n%q\nwant\n%q", chunk, out, in)
				}
			}
		})
	}
}

func slicesContainsTrue(b []bool) bool {
	for _, v := range b {
		if v {
			return true
		}
	}
	return false
}

// TestTagStreamBounded checks that an event held back as a possible
// request is let go, unchanged, once it passes the limit, and that long
// lines of nothing but '\r' are bounded too.
func TestTagStreamBounded(t *testing.T) {
	huge := `data: {"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{"x":"` + strings.Repeat("y", 10000) + `"}}` + "\n\n"
	if out := tagAll(t, []byte(huge), 100, 4096); string(out) != huge {
		t.Errorf("over the limit: changed")
	}
	ts := NewTagStream(io.NopCloser(io.MultiReader(strings.NewReader("data: x\n"), strings.NewReader(strings.Repeat("\r", 1<<20)))), "T", 4096)
	buf := make([]byte, 512)
	total := 0
	for {
		n, err := ts.Read(buf)
		total += n
		if cap(ts.line) > 64<<10 || cap(ts.held) > 64<<10 {
			t.Fatalf("held %d line %d bytes", cap(ts.held), cap(ts.line))
		}
		if err != nil {
			break
		}
	}
	if total != len("data: x\n")+1<<20 {
		t.Errorf("passed %d bytes", total)
	}
}

// FuzzTagStream checks, for any stream: reading it in any chunks gives the
// same bytes; a stream without a tagged method passes unchanged; the
// events are the same, each either unchanged or the request tagged.
func FuzzTagStream(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n"), uint8(3))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n: c\n\n"), uint8(1))
	f.Add([]byte("data:{\"id\":1,\ndata:\"method\":\"roots/list\",\"params\":{\"_meta\":null}}\n\ndata: x"), uint8(5))
	f.Add([]byte("\r\r\r\ndata: \"elicitation/create\"\r\n\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		whole := tagAll(t, in, 0, 1024)
		if parts := tagAll(t, in, int(chunk%64)+1, 1024); !bytes.Equal(parts, whole) {
			t.Fatalf("chunked %q\nwhole %q", parts, whole)
		}
		if !MayBeTagged(in) && !bytes.Equal(whole, in) {
			t.Fatalf("changed a stream without requests:\n%q\n%q", whole, in)
		}
		got, want := parseSSE(whole), parseSSE(in)
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d\n%q\n%q", len(got), len(want), whole, in)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.id != w.id || g.name != w.name || g.hasData != w.hasData {
				t.Fatalf("event %d: %+v, want %+v", i, g, w)
			}
			if g.data == w.data {
				continue
			}
			tagged, ok := TagRequest([]byte(w.data), "T")
			if !ok || string(tagged) != g.data {
				t.Fatalf("event %d: %q, want %q or it tagged", i, g.data, w.data)
			}
		}
	})
}

// BenchmarkTagStream measures reading an event stream of results and
// notifications (nothing to tag) through a TagStream, beside reading it
// directly.
func BenchmarkTagStream(b *testing.B) {
	var stream bytes.Buffer
	for i := range 100 {
		fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"1\",\"progress\":%d}}\n\n", i, i)
	}
	fmt.Fprintf(&stream, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", strings.Repeat("r", 64<<10))
	in := stream.Bytes()
	buf := make([]byte, 4096)
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			r := bytes.NewReader(in)
			for {
				if _, err := r.Read(buf); err != nil {
					break
				}
			}
		}
	})
	b.Run("tagged", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			r := NewTagStream(io.NopCloser(bytes.NewReader(in)), "T", 16<<20)
			for {
				if _, err := r.Read(buf); err != nil {
					break
				}
			}
		}
	})
}

// callStreamSeeds are streams for the call stream's tests: deep values,
// requests to tag, both in one event, odd framing.
var callStreamSeeds = []string{
	"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\",\"params\":{\"x\":" + wiretest.DeepJSON(MaxDepth+5) + "}}\n\n",
	"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + wiretest.DeepJSON(2*MaxDepth) + "}\r\n\r\ndata: {\"id\":2,\"method\":\"roots/list\"}\n\n",
	"data:{\"id\":1,\ndata:\"method\":\"elicitation/create\",\"params\":{\"_meta\":null}}\n\ndata: x",
	"\r\r\r\ndat" + strings.Repeat("a", 40) + ": [[[\n\n:" + strings.Repeat("[", 600) + "\n\n",
	"event: message\nid: 1_0\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}}\n\n",
}

// callStreamAll reads in through NewCallStream in chunks of chunk bytes
// (all at once for 0), and reports whether it said it clamped.
func callStreamAll(t testing.TB, in []byte, chunk int) ([]byte, bool) {
	t.Helper()
	var src io.Reader = bytes.NewReader(in)
	var r io.Reader
	var clamped atomic.Bool
	if chunk > 0 {
		src = &wiretest.ChunkReader{B: in, N: chunk}
		r = iotest.OneByteReader(NewCallStream(io.NopCloser(src), "T", 1<<20, &clamped))
	} else {
		r = NewCallStream(io.NopCloser(src), "T", 1<<20, &clamped)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out, clamped.Load()
}

// clampThenTag reads in as a clamp under a TagStream, the two readers
// NewCallStream stands for, and reports whether the clamp replaced a value.
func clampThenTag(t testing.TB, in []byte) ([]byte, bool) {
	t.Helper()
	var clamped atomic.Bool
	cc := NewClampCloser(io.NopCloser(bytes.NewReader(in)), true)
	cc.Clamped = &clamped
	out, err := io.ReadAll(NewTagStream(cc, "T", 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return out, clamped.Load()
}

// A call stream gives what a clamp under a TagStream gives: deep values
// replaced, requests tagged, everything else byte for byte.
func TestCallStream(t *testing.T) {
	for i, s := range callStreamSeeds {
		want, wantClamped := clampThenTag(t, []byte(s))
		for _, chunk := range []int{0, 1, 7, 512} {
			got, clamped := callStreamAll(t, []byte(s), chunk)
			if !bytes.Equal(got, want) || clamped != wantClamped {
				t.Fatalf("stream %d, chunks of %d: clamped %v, want %v\n%.300q\nwant\n%.300q", i, chunk, clamped, wantClamped, got, want)
			}
		}
	}
	got, clamped := callStreamAll(t, []byte(callStreamSeeds[0]), 0)
	if !clamped || !bytes.Contains(got, TooDeepJSON) || !bytes.Contains(got, []byte(CallMetaKey)) {
		t.Fatalf("a deep sampling request: clamped %v\n%.300q", clamped, got)
	}
}

// FuzzCallStream checks, for any stream cut anyhow, that a call stream
// gives what a clamp under a TagStream gives, and says it clamped when
// the clamp does.
func FuzzCallStream(f *testing.F) {
	for i, s := range callStreamSeeds {
		f.Add([]byte(s), uint8(i*13))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		want, wantClamped := clampThenTag(t, in)
		got, clamped := callStreamAll(t, in, int(chunk%64))
		if !bytes.Equal(got, want) || clamped != wantClamped {
			t.Fatalf("clamped %v, want %v\n%q\nwant\n%q", clamped, wantClamped, got, want)
		}
	})
}
