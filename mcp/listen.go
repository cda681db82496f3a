package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// listenMethod is the method of the requests whose event streams carry a
// 2026-07-28 server's list changes and resource updates.
const listenMethod = "subscriptions/listen"

// errListenEnded says why a session is dropped when its server ended a
// subscriptions/listen stream.
var errListenEnded = errors.New("the server ended a subscriptions/listen stream (list changes and resource updates would be missed)")

// listenWatch ties the subscriptions/listen streams of one connection
// attempt to its session. With protocol 2026-07-28 the go-sdk's client
// opens those streams (one for list changes when it connects, one per
// subscribed resource) and, the server giving no event ids to resume
// from, does not open them again when the server ends one: the session
// would go on without hearing of changes. The connector drops such a
// session instead (Connector.lost): the supervisor connects again at once,
// then with backoff if that keeps happening, lists every item anew and
// renews the subscriptions.
type listenWatch struct {
	c *Connector

	mu    sync.Mutex
	l     *live
	ended bool // a stream of the session ended
}

// attach makes l the session of the streams.
func (w *listenWatch) attach(l *live) {
	w.mu.Lock()
	w.l = l
	w.mu.Unlock()
	l.listen = w
}

// streamEnded drops the session of a stream the server ended. A session
// not ready yet (still listing) is not dropped here: connect asks
// endedEarly once it is. A stream that broke (broke) is not dropped here
// either: the broken stream makes the supervisor ping the server
// (Connector.suspectCurrent), and the session is dropped when the ping
// fails, as any, or, once it succeeds, because of the stream (ended).
// Dropping it at once would reconnect while a restarting server is down,
// and the go-sdk's client, falling back to initialize when
// server/discover fails, could come back on the older protocol.
func (w *listenWatch) streamEnded(broke bool) {
	w.mu.Lock()
	w.ended = true
	l := w.l
	w.mu.Unlock()
	if l != nil && !broke {
		w.c.lost(l, errListenEnded)
	}
}

// hasEnded reports whether a stream of the session ended.
func (w *listenWatch) hasEnded() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// endedEarly drops l, ready now, if one of its streams ended before.
func (w *listenWatch) endedEarly(l *live) {
	w.mu.Lock()
	ended := w.ended
	w.mu.Unlock()
	if ended {
		w.c.lost(l, errListenEnded)
	}
}

// isListen reports whether req, answered by an event stream with status,
// is a subscriptions/listen request of the streamable HTTP transport.
func isListen(req *http.Request, status int) bool {
	return req.Method == http.MethodPost && status == http.StatusOK && req.Header.Get("Mcp-Method") == listenMethod
}

// listenBody is the event stream answering a subscriptions/listen
// request: when it ends while the request is still wanted (the server
// ended it, cleanly or not) after it carried something (the server took
// the request: a refusal is the go-sdk's to report), the watch hears of
// it once, and whether it ended cleanly or broke.
type listenBody struct {
	io.ReadCloser
	ctx  context.Context
	w    *listenWatch
	got  bool
	once sync.Once
}

func (b *listenBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.got = true
	}
	if err != nil && b.got && b.ctx.Err() == nil {
		b.once.Do(func() { b.w.streamEnded(!errors.Is(err, io.EOF)) })
	}
	return n, err
}
