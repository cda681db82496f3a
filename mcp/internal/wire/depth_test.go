package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmkit/toolkit/mcp/internal/wire/wiretest"
)

// maxDepthOf returns the nesting of valid JSON.
func maxDepthOf(t *testing.T, data []byte) int {
	t.Helper()
	depth, most := 0, 0
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return most
		}
		if err != nil {
			t.Fatalf("not JSON: %v: %.200s", err, data)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			most = max(most, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// A message nested deeper than MaxDepth comes out valid, nested no
// deeper, with the deep value replaced by the marker; others pass byte
// for byte.
func TestClampLine(t *testing.T) {
	for _, n := range []int{2, MaxDepth, MaxDepth + 2, 5000} {
		in := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":` + wiretest.DeepJSON(n) + `},{"name":"after"}]}}`)
		out, changed := ClampLine(in)
		if !json.Valid(out) {
			t.Fatalf("%d: output is not JSON: %.300s", n, out)
		}
		if got := maxDepthOf(t, out); got > MaxDepth {
			t.Errorf("%d: output nests %d deep", n, got)
		}
		deep := n+4 > MaxDepth
		if changed != deep || bytes.Contains(out, TooDeepJSON) != deep || bytes.Equal(in, out) == deep {
			t.Errorf("%d: changed %v, want %v", n, changed, deep)
		}
		if !bytes.Contains(out, []byte(`{"name":"after"}`)) {
			t.Errorf("%d: what follows the deep value is lost", n)
		}
	}
}

// The readers clamp a stream however it is cut: line-delimited JSON, and
// the data lines of an event stream (other lines pass as they are).
func TestClampReader(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":2,"result":` + wiretest.DeepJSON(2000) + `}`
	ok := `{"jsonrpc":"2.0","id":1,"result":{"a":"[[[{{"}}`
	lines := ok + "\n" + deep + "\n" + ok + "\n"
	split := strings.Index(deep[300:], "[") + 301 // a data line ends between tokens
	events := ": comment [[[{\r\nid: 7\"[\nevent: message\ndata: " + ok + "\n\ndata: " + deep[:split] + "\ndata: " + deep[split:] + "\r\n\r\nevent: x\ndata: " + ok + "\n\n"
	for _, tc := range []struct {
		name string
		in   string
		sse  bool
	}{{"lines", lines, false}, {"events", events, true}} {
		for _, cut := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
			out, err := io.ReadAll(NewClampReader(cut(strings.NewReader(tc.in)), tc.sse))
			if err != nil {
				t.Fatal(err)
			}
			msgs := messages(string(out), tc.sse)
			var clamped int
			for _, m := range msgs {
				if !json.Valid([]byte(m)) {
					t.Fatalf("%s: a message is not JSON: %.200q", tc.name, m)
				}
				if strings.Contains(m, string(TooDeepJSON)) {
					clamped++
				} else if m != ok {
					t.Errorf("%s: message changed: %.200q", tc.name, m)
				}
			}
			if clamped != 1 {
				t.Errorf("%s: %d messages clamped, want 1", tc.name, clamped)
			}
			if tc.sse && (!strings.Contains(string(out), ": comment [[[{\r\nid: 7\"[\n") || !strings.Contains(string(out), "event: x\n")) {
				t.Errorf("%s: other lines changed: %.300q", tc.name, out)
			}
		}
	}
}

// messages returns the messages of a stream: its lines, or the data of
// its events.
func messages(s string, sse bool) []string {
	var out []string
	if !sse {
		for _, l := range strings.Split(s, "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	for _, ev := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
		var data []string
		for _, l := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(l, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if data != nil {
			out = append(out, strings.Join(data, "\n"))
		}
	}
	return out
}

// Arbitrary bytes: clamping never panics, never lets a value nest deeper
// than MaxDepth, keeps valid JSON valid, and changes nothing that
// nests no deeper.
func FuzzClamp(f *testing.F) {
	f.Add([]byte(wiretest.DeepJSON(MaxDepth+10)), false)
	f.Add([]byte(`{"a":"\"[{"}`+"\n"+wiretest.DeepJSON(3000)), false)
	f.Add([]byte("data: "+wiretest.DeepJSON(600)+"\n\nevent: e\r\ndata: {}\r\n\r\n"), true)
	f.Add([]byte(strings.Repeat("[", 2000)), false)
	f.Add([]byte(`"\\\"`+strings.Repeat("{", 600)), true)
	f.Fuzz(func(t *testing.T, data []byte, sse bool) {
		out, err := io.ReadAll(NewClampReader(iotest.HalfReader(bytes.NewReader(data)), sse))
		if err != nil {
			t.Fatal(err)
		}
		if sse {
			return
		}
		line, changed := ClampLine(data)
		if !bytes.Equal(line, out) {
			t.Fatalf("the reader and ClampLine differ")
		}
		if !changed && !bytes.Equal(out, data) {
			t.Fatal("changed without saying so")
		}
		if json.Valid(data) {
			if !json.Valid(out) {
				t.Fatalf("valid JSON made invalid: %.200q", out)
			}
			if d := maxDepthOf(t, out); d > MaxDepth {
				t.Fatalf("output nests %d deep", d)
			}
			if !changed && maxDepthOf(t, data) > MaxDepth {
				t.Fatal("deep JSON passed")
			}
		}
	})
}
