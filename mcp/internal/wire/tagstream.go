package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"sync/atomic"
)

// Over streamable HTTP a server sends a request that belongs to one of the
// client's requests (sampling, elicitation or roots/list while a tool
// runs) on that request's response stream: the event stream answering its
// POST. The go-sdk client merges every stream into one, so the connector
// marks such requests on their way in: a TagStream reads the event stream
// of one call's POST and adds the call's tag to the _meta of every
// sampling/createMessage, elicitation/create and roots/list request in it
// (CallMetaKey); the connector's handlers read the tag (and take it out)
// to find the caller. Everything else passes through byte for byte: an
// event is held back only while its data may still turn out to be such a
// request (at most classifyPrefix bytes unless it does), and only such a
// request is decoded and encoded again.

// CallMetaKey is the _meta key under which a TagStream adds its tag to a
// request.
const CallMetaKey = "io.github.llmkit.toolkit/call"

// classifyPrefix is how many bytes of an event's data are looked at to
// tell whether it may be a request to tag: the method of a JSON-RPC
// request comes before its params with every common SDK.
const classifyPrefix = 512

// Methods of the requests TagStream tags, as JSON strings cut at their
// '/' (which JSON may also write "\/").
var taggedMethods = [][2][]byte{
	{[]byte(`"sampling`), []byte(`createMessage"`)},
	{[]byte(`"elicitation`), []byte(`create"`)},
	{[]byte(`"roots`), []byte(`list"`)},
}

// MayBeTagged reports whether data holds the JSON string of a method
// TagStream tags. It looks only around each '/', so that data without
// any costs one IndexByte.
func MayBeTagged(data []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '/')
		if j < 0 {
			return false
		}
		j += i
		head, tail := data[:j], data[j+1:]
		head = bytes.TrimSuffix(head, []byte{'\\'})
		for _, m := range taggedMethods {
			if bytes.HasSuffix(head, m[0]) && bytes.HasPrefix(tail, m[1]) {
				return true
			}
		}
		i = j + 1
	}
}

// Event modes of a TagStream.
const (
	evUndecided = iota // data held until classifyPrefix bytes or the event's end
	evHolding          // a candidate: data held until the event's end
	evPassing          // not a candidate: passed on as it comes
)

// TagStream is an io.ReadCloser over an event stream that tags the
// requests in it (see above).
type TagStream struct {
	src io.ReadCloser
	max int // the most bytes of one event held back
	// hold tells, from the start of an event's data, whether the event
	// may be one to rewrite; rewrite returns the message of such an
	// event rewritten, and whether it did.
	hold    func(prefix []byte) bool
	rewrite func(msg []byte) ([]byte, bool) // nil: TagRequest with tag
	tag     string

	// clamping: the stream is clamped (as a ClampReader clamps an event
	// stream) before it is looked at; clamped, if set, learns that a
	// value was replaced.
	clamping bool
	clamp    sseClamp
	clamped  *atomic.Bool
	cbuf     []byte // the clamped bytes of the last read

	sc     *Scratch // where the buffers come from; nil: none, or given back
	buf    []byte   // read buffer
	out    []byte   // bytes ready for the reader
	outOff int
	err    error // src's error, returned once out is drained

	mode     int
	held     []byte // raw data lines of the current event, held back
	data     []byte // undecided: the event's data so far (values joined by '\n')
	line     []byte // the current line, when it is held
	linePass bool   // the current line is passed on as it comes
	lineText bool   // linePass: the line has a byte other than '\r'
}

// NewTagStream returns a TagStream that adds tag under CallMetaKey to the
// requests to tag in the event stream src; max (positive) bounds an
// event held back.
func NewTagStream(src io.ReadCloser, tag string, max int) *TagStream {
	return &TagStream{src: src, max: max, hold: MayBeTagged, tag: tag}
}

// NewCallStream returns a TagStream over the event stream of a call's
// POST that also clamps it first, as NewClampReader would (in the same
// pass over each read, with the same buffers): the reader of the answer to
// a call. clamped, if not nil, is set to true when a value is replaced.
func NewCallStream(src io.ReadCloser, tag string, max int, clamped *atomic.Bool) *TagStream {
	return &TagStream{src: src, max: max, hold: MayBeTagged, tag: tag, clamping: true, clamped: clamped}
}

// NewEventRewriter returns a TagStream that rewrites the events hold and
// rewrite choose (see TagStream) instead of tagging requests: the answer
// to a tools/list, for one. max (positive) bounds an event held back.
func NewEventRewriter(src io.ReadCloser, max int, hold func([]byte) bool, rewrite func([]byte) ([]byte, bool)) *TagStream {
	return &TagStream{src: src, max: max, hold: hold, rewrite: rewrite}
}

// Close closes the stream read.
func (t *TagStream) Close() error { return t.src.Close() }

// Read implements io.Reader.
func (t *TagStream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for t.outOff == len(t.out) {
		t.out, t.outOff = t.out[:0], 0
		if t.err != nil {
			t.release()
			return 0, t.err
		}
		if t.buf == nil {
			t.sc, t.buf = takeBuffer(len(p))
			if t.sc != nil {
				t.out, t.held, t.data, t.line, t.cbuf = t.sc.Out, t.sc.Held, t.sc.Data, t.sc.Line, t.sc.Clamped
			}
		}
		n, err := t.src.Read(t.buf)
		in := t.buf[:n]
		if t.clamping {
			t.cbuf = t.clamp.appendClamped(t.cbuf[:0], in)
			in = t.cbuf
			if t.clamped != nil && t.clamp.json.clamped {
				t.clamped.Store(true)
			}
		}
		t.feed(in)
		if err != nil {
			t.flush()
			t.err = err
		}
	}
	n := copy(p, t.out[t.outOff:])
	t.outOff += n
	return n, nil
}

// release gives the stream's buffers back to the pool (scratch.go): it
// returned the end of src, and flushed everything it held.
func (t *TagStream) release() {
	if t.sc == nil {
		return
	}
	t.sc.Out, t.sc.Held, t.sc.Data, t.sc.Line, t.sc.Clamped = t.out, t.held, t.data, t.line, t.cbuf
	t.sc.Put()
	t.sc, t.buf, t.out, t.held, t.data, t.line, t.cbuf = nil, nil, nil, nil, nil, nil, nil
	t.outOff = 0
}

// feed processes the next bytes of the stream.
func (t *TagStream) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i+1]
		}
		p = p[len(seg):]
		if t.linePass {
			t.out = append(t.out, seg...)
			if !t.lineText && hasText(seg) {
				t.lineText = true
			}
			if i >= 0 {
				t.linePass = false
				if !t.lineText {
					t.mode = evUndecided // a blank line ends the event
				}
				t.lineText = false
				t.startLine()
			}
			continue
		}
		t.line = append(t.line, seg...)
		if i < 0 {
			t.partial()
			return
		}
		line := t.line
		t.line = t.line[:0]
		t.endLine(line)
		t.startLine()
	}
}

// startLine starts a line: one of an event that is not a candidate passes
// as it comes.
func (t *TagStream) startLine() {
	if t.mode == evPassing {
		t.linePass = true
	}
}

// trimEOL returns line without the '\r' and '\n' bytes that end it.
func trimEOL(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line
}

// hasText reports whether b has a byte other than '\r' and '\n'.
func hasText(b []byte) bool {
	for _, c := range b {
		if c != '\r' && c != '\n' {
			return true
		}
	}
	return false
}

// dataValue returns the value of a data line (without its line end), and
// whether it is one.
func dataValue(line []byte) ([]byte, bool) {
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil, false
	}
	return bytes.TrimSpace(v), true
}

// endLine handles a complete held line (with its line end).
func (t *TagStream) endLine(line []byte) {
	if len(trimEOL(line)) == 0 {
		t.endEvent()
		t.out = append(t.out, line...)
		return
	}
	t.held = append(t.held, line...)
	if v, ok := dataValue(trimEOL(line)); ok && t.mode == evUndecided {
		if len(t.data) > 0 {
			t.data = append(t.data, '\n')
		}
		t.data = append(t.data, v[:min(len(v), classifyPrefix)]...)
		if len(t.data) >= classifyPrefix {
			t.classify()
		}
	}
	if t.mode != evPassing && len(t.held) > t.max {
		t.pass()
	}
}

// partial looks at the incomplete held line: whether the event can be told
// not to be a candidate yet, or is too large to hold.
func (t *TagStream) partial() {
	if len(t.held)+len(t.line) > t.max {
		t.pass()
		t.passLine()
		return
	}
	if t.mode != evUndecided || len(t.line) < classifyPrefix {
		return
	}
	v, ok := dataValue(t.line)
	if !ok || len(t.data)+len(v) < classifyPrefix {
		return
	}
	if len(t.data) > 0 {
		t.data = append(t.data, '\n')
	}
	t.data = append(t.data, v[:min(len(v), classifyPrefix)]...)
	t.classify()
	if t.mode == evPassing {
		t.passLine()
	}
}

// passLine passes the held part of the current line on, and the rest of
// it as it comes.
func (t *TagStream) passLine() {
	t.out = append(t.out, t.line...)
	t.lineText = hasText(t.line)
	t.line = t.line[:0]
	t.linePass = true
}

// classify decides, from the first classifyPrefix bytes of the data of an
// undecided event, whether it may be a request to tag.
func (t *TagStream) classify() {
	candidate := t.hold(t.data)
	t.data = t.data[:0]
	if candidate {
		t.mode = evHolding
		return
	}
	t.pass()
}

// pass passes the event's held data on and the rest of it as it comes.
func (t *TagStream) pass() {
	t.out = append(t.out, t.held...)
	t.held, t.data = t.held[:0], t.data[:0]
	t.mode = evPassing
}

// endEvent handles the end of an event: its held data goes out, with the
// tag when it is a request to tag.
func (t *TagStream) endEvent() {
	if len(t.held) > 0 && t.mode != evPassing {
		if t.mode == evUndecided {
			t.classify()
		}
		if t.mode == evHolding {
			if tagged, ok := t.rewriteEvent(joinData(t.held)); ok {
				t.out = appendTagged(t.out, t.held, tagged)
			} else {
				t.out = append(t.out, t.held...)
			}
		}
	}
	t.held, t.data = t.held[:0], t.data[:0]
	t.mode = evUndecided
}

// rewriteEvent returns msg, the message of a held event, rewritten, and
// whether it was.
func (t *TagStream) rewriteEvent(msg []byte) ([]byte, bool) {
	if t.rewrite == nil {
		return TagRequest(msg, t.tag)
	}
	return t.rewrite(msg)
}

// flush passes on everything held: the stream ended.
func (t *TagStream) flush() {
	t.out = append(t.out, t.held...)
	t.out = append(t.out, t.line...)
	t.held, t.data, t.line = t.held[:0], t.data[:0], t.line[:0]
	t.mode = evUndecided
}

// appendTagged appends the held lines of an event to out, its data lines
// replaced by one line holding msg, where the first was.
func appendTagged(out, held, msg []byte) []byte {
	done := false
	for len(held) > 0 {
		line := held
		if i := bytes.IndexByte(held, '\n'); i >= 0 {
			line = held[:i+1]
		}
		held = held[len(line):]
		if _, ok := dataValue(trimEOL(line)); !ok {
			out = append(out, line...)
			continue
		}
		if !done {
			out = append(out, "data: "...)
			out = append(out, msg...)
			out = append(out, '\n')
			done = true
		}
	}
	return out
}

// joinData returns the data of held data lines, joined by '\n' as the SSE
// format joins them.
func joinData(held []byte) []byte {
	out := []byte{}
	first := true
	for len(held) > 0 {
		line := held
		if i := bytes.IndexByte(held, '\n'); i >= 0 {
			line = held[:i]
			held = held[i+1:]
		} else {
			held = nil
		}
		v, ok := dataValue(trimEOL(line))
		if !ok {
			continue
		}
		if !first {
			out = append(out, '\n')
		}
		first = false
		out = append(out, v...)
	}
	return out
}

// TagRequest returns msg with tag under CallMetaKey in its params' _meta,
// when msg is a JSON-RPC request whose method is one TagStream tags.
func TagRequest(msg []byte, tag string) ([]byte, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil {
		return nil, false
	}
	var method string
	if json.Unmarshal(top["method"], &method) != nil || !tagsMethod(method) {
		return nil, false
	}
	if id := top["id"]; len(id) == 0 || string(id) == "null" {
		return nil, false // a notification
	}
	params := map[string]json.RawMessage{}
	if p := top["params"]; len(p) > 0 && string(p) != "null" {
		if json.Unmarshal(p, &params) != nil || params == nil {
			return nil, false
		}
	}
	meta := map[string]json.RawMessage{}
	if m := params["_meta"]; len(m) > 0 && string(m) != "null" {
		if json.Unmarshal(m, &meta) != nil || meta == nil {
			return nil, false
		}
	}
	var err error
	if meta[CallMetaKey], err = marshalNoEscape(tag); err != nil {
		return nil, false
	}
	if params["_meta"], err = marshalNoEscape(meta); err != nil {
		return nil, false
	}
	if top["params"], err = marshalNoEscape(params); err != nil {
		return nil, false
	}
	out, err := marshalNoEscape(top)
	return out, err == nil
}

// tagsMethod reports whether requests of method m are tagged.
func tagsMethod(m string) bool {
	return m == "sampling/createMessage" || m == "elicitation/create" || m == "roots/list"
}

// marshalNoEscape encodes v as compact JSON without escaping HTML
// characters, so that strings pass on as they came.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
