package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// roundTripper decorates the HTTP transport of a connector.
type roundTripper struct {
	conn     *Connector
	base     http.RoundTripper
	header   http.Header
	maxBody  int64
	status   *atomic.Int32
	onBroken func(error)
	listen   *listenWatch // nil: listen streams are not watched
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(rt.header) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range rt.header {
			if _, ok := req.Header[k]; !ok {
				req.Header[k] = append([]string(nil), vs...)
			}
		}
	}
	var held *answerStream
	if req.Method == http.MethodPost {
		if in := inflightFrom(req.Context()); in != nil {
			// The cancellation of a request whose session the connector is
			// closing: once it is sent, the session may go (live.close).
			if in.closing.Load() && isCancellation(req) {
				defer in.settle()
			}
			// A call's answer stream ends by itself (answerstream.go).
			req, held = in.holdStream(req)
		}
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		if held != nil {
			held.release()
		}
		if req.Method == http.MethodPost && !neverSent(err) {
			// The body may have reached the server before the connection
			// broke: the request may have run.
			markSent(req.Context())
		}
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && rt.conn != nil {
		rt.conn.noteChallenge(resp)
	}
	if rt.status != nil && req.Method == http.MethodPost {
		rt.status.CompareAndSwap(0, int32(resp.StatusCode))
	}
	if req.Method == http.MethodPost {
		if in := inflightFrom(req.Context()); in != nil {
			in.posted.CompareAndSwap(0, int32(resp.StatusCode))
		}
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	stream := mt == "text/event-stream"
	limit := rt.maxBody
	if stream {
		limit = 0 // events are bounded one by one by the SDK
	}
	rc := resp.Body
	owner := inflightFrom(req.Context())
	slot := taskSlotFrom(req.Context())
	// The stream of a call's POST (the answer to a call, read, or prompt):
	// the requests of the server in it belong to that call, and it is
	// clamped, both in one pass (wire.NewCallStream; see below).
	callStream := stream && req.Method == http.MethodPost && owner != nil && slot == nil && rt.conn != nil
	switch {
	case callStream:
		rc = wire.NewCallStream(rc, rt.conn.tag(owner), rt.conn.o.maxMessage, &owner.tooDeep)
	case (stream && req.Method == http.MethodGet) || (mt == "application/json" || stream) && slot != nil:
		// Clamp what the server sends (package internal/wire): the answer to a
		// tools/list, and the event streams of GET requests (all of the
		// legacy SSE transport's messages, a streamable session's own
		// requests and notifications).
		rc = wire.NewClampCloser(rc, stream)
	case owner != nil && req.Method == http.MethodPost && (mt == "application/json" || stream):
		// The answer to a call, read, or prompt: the go-sdk would close
		// the whole session on one nested past its limit, cutting every
		// request in flight. Clamped, it decodes, and the request fails
		// alone (Connector.doRequest).
		cc := wire.NewClampCloser(rc, stream)
		cc.Clamped = &owner.tooDeep
		rc = cc
	}
	if stream && rt.listen != nil && isListen(req, resp.StatusCode) {
		rc = &listenBody{ReadCloser: rc, ctx: req.Context(), w: rt.listen}
	}
	if stream && owner != nil && rt.conn != nil && !callStream {
		// The stream of a call's request: the requests of the server in
		// it belong to that call (package internal/wire).
		rc = wire.NewTagStream(rc, rt.conn.tag(owner), rt.conn.o.maxMessage)
	}
	if slot != nil && stream && req.Method == http.MethodPost {
		// The answer to a tools/list request in an event stream: its
		// page of tools goes to the slot (tools_page.go); every event is
		// held (bounded by the message limit) until it is known.
		maxMsg := DefaultMaxMessageBytes
		if rt.conn != nil {
			maxMsg = rt.conn.o.maxMessage
		}
		rc = wire.NewEventRewriter(rc, maxMsg, holdEvery, slot.takeAnswer)
	}
	body := &watchedBody{rc: rc, left: limit, limited: limit > 0, ctx: req.Context(), onBroken: rt.onBroken, held: held}
	if stream && rt.conn != nil && rt.conn.link.scanned {
		// The stream of a POST belongs to the request it answers.
		body.scanner = noteScanner{c: rt.conn, sse: true, owner: owner, pooled: true}
		body.scan = &body.scanner
	}
	if slot != nil && !stream && mt == "application/json" && req.Method == http.MethodPost {
		// The answer to a tools/list request in JSON (tools_page.go).
		resp.Body = &pageBody{rc: body, slot: slot}
		return resp, nil
	}
	resp.Body = body
	return resp, nil
}

// mediaType returns the media type of a Content-Type header, lower case
// and without parameters; "" when it does not parse. The two types of the
// protocol, as servers send them, cost no parsing.
func mediaType(contentType string) string {
	switch contentType {
	case "text/event-stream", "application/json":
		return contentType
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// holdEvery holds every event of a stream (newEventRewriter).
func holdEvery([]byte) bool { return true }

// noteCancelled is the method of a cancellation notification.
var noteCancelled = []byte(`"notifications/cancelled"`)

// isCancellation reports whether the body of req, a POST, is a small
// message that cancels a request.
func isCancellation(req *http.Request) bool {
	if req.GetBody == nil || req.ContentLength <= 0 || req.ContentLength > 4<<10 {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 4<<10))
	return err == nil && bytes.Contains(b, noteCancelled)
}

// errBodyTooLarge reports a response body over the connector's limit.
var errBodyTooLarge = errors.New("response body exceeds the connector's message size limit")

// watchedBody bounds a response body and reports a connection that broke
// while it was being read (not a clean end, and not the reader's own
// cancellation): the SDK does not always notice such a break itself.
type watchedBody struct {
	rc       io.ReadCloser
	left     int64
	limited  bool
	ctx      context.Context
	onBroken func(error)
	once     sync.Once
	scan     *noteScanner // nil: not scanned; else scanner
	scanner  noteScanner
	held     *answerStream // released when the body ends; nil: none
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.limited {
		if b.left <= 0 {
			return 0, errBodyTooLarge
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if n > 0 && b.scan != nil {
		b.scan.feed(p[:n])
	}
	if err != nil && err != io.EOF && b.ctx.Err() == nil && b.onBroken != nil {
		b.once.Do(func() { b.onBroken(err) })
	}
	if err != nil && b.scan != nil {
		b.scan.release()
		b.scan = nil
	}
	if err != nil && b.held != nil {
		b.held.release()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.rc.Close()
	if b.held != nil {
		b.held.release()
	}
	return err
}

// neverSent reports whether a failed HTTP round trip provably sent nothing:
// the connection could not be made.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
