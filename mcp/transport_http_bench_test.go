package mcp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

// cannedStream answers every request with the same event stream.
type cannedStream []byte

func (s cannedStream) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(s)),
	}, nil
}

// BenchmarkAnswerStream measures what the connector's transport adds to
// the answer stream of one call over streamable HTTP (the POST and its
// event stream, read as the go-sdk reads it): the work of the connector
// itself, free of the network and of the SDK.
func BenchmarkAnswerStream(b *testing.B) {
	c, err := New("http://bench.invalid/mcp", "bench", "1")
	mustNotErr(b, err)
	answer := cannedStream("event: message\nid: 1_0\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}}\n\n")
	rt := c.httpClientWith(nil).Transport.(*roundTripper)
	rt.base = answer
	br := bufio.NewReader(nil)
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://bench.invalid/mcp", nil)
			mustNotErr(b, err)
			resp, err := answer.RoundTrip(req)
			mustNotErr(b, err)
			readEvents(br, resp.Body)
		}
	})
	b.Run("connector", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, _, done := c.calls.begin(context.Background(), nil)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://bench.invalid/mcp", nil)
			mustNotErr(b, err)
			resp, err := rt.RoundTrip(req)
			mustNotErr(b, err)
			readEvents(br, resp.Body)
			inflightFrom(ctx).finish(true, answeredStreamWait)
			done()
		}
	})
}

// readEvents reads body to its end, as the go-sdk reads an event stream,
// and closes it.
func readEvents(br *bufio.Reader, body io.ReadCloser) {
	br.Reset(body)
	for {
		if _, err := br.ReadSlice('\n'); err != nil {
			break
		}
	}
	body.Close()
}
