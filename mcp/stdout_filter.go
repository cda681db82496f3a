package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
)

// jsonLines passes on the lines of a stdio server's stdout that are JSON
// (looksLikeMessage, else json.Valid) and drops the others with a rate-limited log record (rateLimiter): a
// server that prints something else on stdout (a stray console.log, a
// banner) keeps its session, as with the TypeScript SDK, where the SDK's
// decoder would fail it. Blank lines are passed on; a line longer than max
// is passed on unchecked, for the SDK to refuse.
type jsonLines struct {
	r      *bufio.Reader
	max    int
	logger *slog.Logger
	lim    *rateLimiter

	line    []byte // the line being read
	pending []byte // what is left to hand on of the current line
	long    bool   // passing on the rest of a line longer than max
	err     error
}

func newJSONLines(r io.Reader, max int, logger *slog.Logger) *jsonLines {
	return &jsonLines{r: bufio.NewReaderSize(r, 64<<10), max: max, logger: logger, lim: newLogLimiter()}
}

// nextLine returns the next line to hand on, without its line end; long
// reports a line longer than max (of which only the first part is read,
// and the rest skipped). The slice is valid until the next call.
func (f *jsonLines) nextLine() (line []byte, long bool, err error) {
	for {
		for len(f.pending) == 0 {
			if f.err != nil {
				return nil, false, f.err
			}
			f.next()
		}
		line, long = f.pending, f.long
		f.pending = nil
		for f.long && f.err == nil {
			f.next() // skip the rest of an over-long line
			f.pending = nil
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return t, long, nil
		}
	}
}

func (f *jsonLines) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next reads the next line, or the next part of an over-long line, into
// pending, or sets err.
func (f *jsonLines) next() {
	if cap(f.line) > 1<<20 {
		f.line = nil // do not keep a large line's buffer
	}
	f.line = f.line[:0]
	for {
		chunk, err := f.r.ReadSlice('\n')
		if f.long {
			// The rest of an over-long line, passed on as it comes.
			f.line = append(f.line, chunk...)
			f.pending = f.line
			f.long = err == bufio.ErrBufferFull
			if err != nil && err != bufio.ErrBufferFull {
				f.err = err
			}
			return
		}
		f.line = append(f.line, chunk...)
		if err == bufio.ErrBufferFull {
			if len(f.line) > f.max {
				f.pending, f.long = f.line, true
				return
			}
			continue
		}
		if err != nil {
			f.err = err
			if n := f.lim.flush(); n > 0 {
				f.logger.Warn("lines of the server's stdout skipped without a log (rate limit)", "dropped", n)
			}
		}
		break
	}
	if t := bytes.TrimSpace(f.line); len(t) > 0 && !looksLikeMessage(t) && !json.Valid(t) {
		if ok, dropped := f.lim.take(); ok {
			line := truncateLine(string(t))
			if dropped > 0 {
				f.logger.Warn("skipping a line of the server's stdout that is not JSON", "line", line, "dropped", dropped)
			} else {
				f.logger.Warn("skipping a line of the server's stdout that is not JSON", "line", line)
			}
		}
		return
	}
	f.pending = f.line
}

// looksLikeMessage reports whether a line is framed like a JSON-RPC message
// (an object or a batch that names "jsonrpc"): such lines are passed on
// without being scanned, the SDK decodes them anyway. Only other lines are
// checked with json.Valid.
func looksLikeMessage(t []byte) bool {
	first, last := t[0], t[len(t)-1]
	return (first == '{' && last == '}' || first == '[' && last == ']') && bytes.Contains(t, noteJSONRPC)
}

var noteJSONRPC = []byte(`"jsonrpc"`)
