package wire

import (
	"bytes"
	"io"
	"sync/atomic"
)

// The go-sdk refuses a message that nests more than 1,000 levels deep, and
// a message it cannot decode ends the session (stdio and the other
// line-based transports) or fails the request (HTTP): one tool whose
// schema nests 5,000 levels deep would take its server's whole tools/list
// down, and the connector would reconnect to be refused again. So the
// connector clamps what a server sends before the SDK decodes it: a value
// that opens deeper than MaxDepth levels is replaced, whole, with the
// string tooDeep. A tool whose definition holds that string is refused
// alone (the connector's objectSchema). Messages that nest less, which is all of them from
// a sane server, pass byte for byte.

// MaxDepth is the nesting of a server's messages the connector lets
// through.
const MaxDepth = 512

// TooDeepJSON is the JSON of the string that stands for a value nested
// too deep (how encoding/json writes it, too).
var TooDeepJSON = []byte(`"\u0000toolkit: value nested too deep"`)

// depthClamp is the state of clamping a stream of JSON text (one or more
// values, whitespace between).
type depthClamp struct {
	depth    int  // objects and arrays open, the skipped ones included
	skipping bool // inside a value that is being replaced
	inString bool
	escaped  bool
	clamped  bool // a value was replaced
}

// reset forgets the state, for a new JSON text.
func (c *depthClamp) reset() { *c = depthClamp{clamped: c.clamped} }

// appendClamped appends src, clamped, to dst.
func (c *depthClamp) appendClamped(dst, src []byte) []byte {
	start := 0 // src[start:i] is still to be copied (when not skipping)
	for i := 0; i < len(src); i++ {
		b := src[i]
		if c.inString {
			switch {
			case c.escaped:
				c.escaped = false
			case b == '\\':
				c.escaped = true
			case b == '"':
				c.inString = false
			}
			continue
		}
		switch b {
		case '"':
			c.inString = true
		case '{', '[':
			c.depth++
			if c.depth == MaxDepth+1 && !c.skipping {
				dst = append(dst, src[start:i]...)
				dst = append(dst, TooDeepJSON...)
				c.skipping, c.clamped = true, true
			}
		case '}', ']':
			if c.depth > 0 {
				c.depth--
			}
			if c.skipping && c.depth == MaxDepth {
				c.skipping = false
				start = i + 1
			}
		}
	}
	if !c.skipping {
		dst = append(dst, src[start:]...)
	}
	return dst
}

// ClampLine returns a line-delimited message clamped, and whether it
// changed.
func ClampLine(line []byte) ([]byte, bool) {
	var c depthClamp
	out := c.appendClamped(make([]byte, 0, len(line)), line)
	return out, c.clamped
}

// sseClamp clamps the JSON in the data lines of an event stream; other
// lines pass as they are. The JSON of an event may span several data
// lines (joined by newlines, which JSON takes for whitespace); each event
// starts afresh.
type sseClamp struct {
	json     depthClamp
	field    []byte // the start of the current line, while its field is unknown
	fieldBuf [maxFieldName]byte
	known    bool // the current line's field is known
	data     bool // ... and it is "data": its value is JSON
	lineText bool // the current line is not empty
	lastCR   bool // the previous line ended with '\r'
}

// maxFieldName bounds the bytes held back to tell a line's field.
const maxFieldName = 16

// appendClamped appends src, clamped, to dst.
func (s *sseClamp) appendClamped(dst, src []byte) []byte {
	for len(src) > 0 {
		if s.lastCR && src[0] == '\n' {
			// The '\n' of a "\r\n" line ending.
			s.lastCR = false
			dst = append(dst, '\n')
			src = src[1:]
			continue
		}
		s.lastCR = false
		if !s.known {
			// Hold the line's start until its field is known.
			b := src[0]
			src = src[1:]
			switch {
			case b == '\n' || b == '\r':
				dst = append(dst, s.field...)
				dst = append(dst, b)
				s.endLine(b)
			case b == ':' || len(s.field) >= maxFieldName:
				s.data = b == ':' && string(s.field) == "data"
				s.known, s.lineText = true, true
				dst = append(dst, s.field...)
				dst = append(dst, b)
				s.field = s.field[:0]
			default:
				if s.field == nil {
					s.field = s.fieldBuf[:0] // never longer: see above
				}
				s.field = append(s.field, b)
				s.lineText = true
			}
			continue
		}
		end := bytes.IndexAny(src, "\r\n")
		chunk := src
		if end >= 0 {
			chunk = src[:end]
		}
		if s.data {
			dst = s.json.appendClamped(dst, chunk)
		} else {
			dst = append(dst, chunk...)
		}
		if end < 0 {
			return dst
		}
		b := src[end]
		dst = append(dst, b)
		src = src[end+1:]
		s.endLine(b)
	}
	return dst
}

// endLine records the end of a line by b ('\r' or '\n'); an empty line
// ends the event.
func (s *sseClamp) endLine(b byte) {
	if !s.lineText {
		s.json.reset()
	}
	s.field = s.field[:0]
	s.known, s.data, s.lineText = false, false, false
	s.lastCR = b == '\r'
}

// ClampReader clamps what it reads from r: JSON text, or an event stream
// when sse is set.
type ClampReader struct {
	r    io.Reader
	sse  bool
	json depthClamp
	ev   sseClamp
	sc   *Scratch // where buf and out come from; nil: none, or given back
	buf  []byte
	out  []byte
	off  int
	err  error
	// Clamped, if set, is set to true when a value is replaced.
	Clamped *atomic.Bool
}

// NewClampReader returns a reader of r, clamped: JSON text, or an event
// stream when sse is set.
func NewClampReader(r io.Reader, sse bool) *ClampReader { return &ClampReader{r: r, sse: sse} }

// Read implements io.Reader.
func (c *ClampReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for c.off == len(c.out) {
		c.out, c.off = c.out[:0], 0
		if c.err != nil {
			c.release()
			return 0, c.err
		}
		if c.buf == nil {
			c.sc, c.buf = takeBuffer(len(p))
			if c.sc != nil {
				c.out = c.sc.Out
			}
		}
		n, err := c.r.Read(c.buf)
		if c.sse {
			c.out = c.ev.appendClamped(c.out, c.buf[:n])
		} else {
			c.out = c.json.appendClamped(c.out, c.buf[:n])
		}
		if c.Clamped != nil && (c.json.clamped || c.ev.json.clamped) {
			c.Clamped.Store(true)
		}
		c.err = err
	}
	n := copy(p, c.out[c.off:])
	c.off += n
	return n, nil
}

// release gives the reader's buffers back to the pool (scratch.go): it
// returned the end of r.
func (c *ClampReader) release() {
	if c.sc == nil {
		return
	}
	c.sc.Out = c.out
	c.sc.Put()
	c.sc, c.buf, c.out, c.off = nil, nil, nil, 0
}

// ClampCloser is a ClampReader over an io.ReadCloser: a clamped HTTP
// response body, or the reader of a custom IOTransport.
type ClampCloser struct {
	*ClampReader
	c io.Closer
}

// NewClampCloser returns rc, clamped as NewClampReader says.
func NewClampCloser(rc io.ReadCloser, sse bool) *ClampCloser {
	return &ClampCloser{ClampReader: NewClampReader(rc, sse), c: rc}
}

// Close closes the underlying reader.
func (c *ClampCloser) Close() error { return c.c.Close() }
