package mcp

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"
)

// Over streamable HTTP the answer to a call comes on the event stream of
// its POST, which the server ends just after the answer. The go-sdk hands
// the answer on as soon as it has read it, and reads the rest of the
// stream in the background so that the connection goes back to the pool.
// Were the HTTP request bound to the call's context, the end of that
// context as the call returns (the connector ends it, and so does every
// caller with a context per call: a toolkit Call, a gateway's request)
// would often come before that last read, and net/http would close the
// connection under it: the next request would wait for a new connection
// (a TCP, and with https a TLS, handshake on the call path).
//
// So the HTTP request of a call's POST has a context of its own (an
// answerStream): while the call waits, the end of the call's context ends
// it, as before; once the call has its answer, the stream is left to end
// by itself, for at most answeredStreamWait, which bounds what a server
// that keeps the stream open after its answer can hold. This costs no
// goroutine and no timer when the stream ends in time, which is always
// but for such a server.

// answeredStreamWait is how long the stream of an answered call may stay
// open.
const answeredStreamWait = 2 * time.Second

// errAnsweredStreamOpen ends the stream of an answered call that the
// server kept open past answeredStreamWait.
var errAnsweredStreamOpen = errors.New("the server kept the stream of an answered request open")

// answerStream is the HTTP request of one POST of a call.
type answerStream struct {
	cancel context.CancelCauseFunc
	stop   func() bool // stops the call's context from ending the request
	ended  atomic.Bool // the response body was closed or read to its end
	timer  atomic.Pointer[time.Timer]
}

// holdStream returns req, a POST of the call in, with a context of its own
// (see above) and its answerStream; req itself and nil once the call has
// returned (the cancellation the SDK sends after it).
func (in *inflight) holdStream(req *http.Request) (*http.Request, *answerStream) {
	in.streamsMu.Lock()
	defer in.streamsMu.Unlock()
	if in.finished {
		return req, nil
	}
	ctx := req.Context()
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	s := &answerStream{cancel: cancel}
	s.stop = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	if in.streams == nil {
		in.streams = in.stream1[:0]
	}
	in.streams = append(in.streams, s)
	return req.WithContext(hctx), s
}

// finish records that the call returned, answered or not, before its
// context ends: the streams of an answered call end by themselves (within
// wait), those of a call without an answer at once.
func (in *inflight) finish(answered bool, wait time.Duration) {
	in.streamsMu.Lock()
	in.finished = true
	streams := in.streams
	in.streams = nil
	in.streamsMu.Unlock()
	for _, s := range streams {
		if !s.stop() || s.ended.Load() {
			continue // already ended, or being ended by the call's context
		}
		if !answered {
			s.cancel(nil)
			continue
		}
		s.timer.Store(time.AfterFunc(wait, func() { s.cancel(errAnsweredStreamOpen) }))
		if s.ended.Load() {
			s.release()
		}
	}
}

// release ends the request: its response body was closed or read to the
// end, or it failed.
func (s *answerStream) release() {
	s.ended.Store(true)
	if t := s.timer.Load(); t != nil {
		t.Stop()
	}
	s.stop()
	s.cancel(nil)
}
