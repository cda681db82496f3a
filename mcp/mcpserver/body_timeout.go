package mcpserver

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"
)

// bodyTimeout gives the body of each request d to arrive (WithReadTimeout).
// The deadline is the connection's read deadline, set through the
// request's http.ResponseController once the headers are read and cleared
// as soon as the body has been read to its end (net/http's own server
// clears it then too): the response that follows, an event stream, is
// never timed. A request without a body (an SSE GET) gets no deadline.
// Unlike http.Server's ReadTimeout and WriteTimeout, which time whole
// requests and responses, this bounds only what a client must send.
func bodyTimeout(h http.Handler, d time.Duration, logger *slog.Logger) http.Handler {
	logs := newLogLimiter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			h.ServeHTTP(w, r) // a ResponseWriter without deadlines
			return
		}
		r.Body = &timedBody{ReadCloser: r.Body, rc: rc, timeout: d, logger: logger, logs: logs, remote: r.RemoteAddr}
		h.ServeHTTP(w, r)
	})
}

// timedBody is a request body read under a deadline.
type timedBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	logger  *slog.Logger
	logs    *logLimiter
	remote  string
	done    bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case err == io.EOF:
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.done = true
		b.logs.warn(b.logger, "mcp server: request body not received in time; ending the request",
			"timeout", b.timeout, "remote", b.remote)
	}
	return n, err
}
