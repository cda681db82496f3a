package wire

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Readers that take their buffers from the pool one after another, some
// left before their end, give each stream out as if it had buffers of its
// own: nothing of an earlier stream shows in a later one.
func TestScratchReuse(t *testing.T) {
	big := "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"text\":\"" + strings.Repeat("z", 3*ReadSize) + "\"}}\n\n"
	streams := []string{
		"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n",
		big,
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n",
		"data: " + strings.Repeat("[", MaxDepth+3) + strings.Repeat("]", MaxDepth+3) + "\n\n",
		"event: e\ndata: {\"a\":1}\n\ndata: partial",
	}
	want := make([][]byte, len(streams))
	for i, s := range streams {
		want[i] = readAllThrough(t, s, false)
	}
	for round := range 3 {
		for i, s := range streams {
			// A reader left after its first read keeps its buffers.
			left := NewTagStream(io.NopCloser(NewClampReader(strings.NewReader(s), true)), "T", 1<<20)
			if _, err := left.Read(make([]byte, 16)); err != nil {
				t.Fatal(err)
			}
			if got := readAllThrough(t, s, round%2 == 1); !bytes.Equal(got, want[i]) {
				t.Fatalf("round %d, stream %d:\n%q\nwant\n%q", round, i, got, want[i])
			}
		}
	}
}

// readAllThrough reads s through a clamp and a TagStream, as the connector
// reads a call's answer stream, a byte at a time when bytewise is set.
func readAllThrough(t *testing.T, s string, bytewise bool) []byte {
	t.Helper()
	var r io.Reader = NewTagStream(io.NopCloser(NewClampReader(strings.NewReader(s), true)), "T", 1<<20)
	if bytewise {
		r = iotest.OneByteReader(r)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
