package wire

import "sync"

// The answer to most calls is one short event, and every reader of a
// call's answer stream (the clamp, the tagging, the connector's
// notification scanner) needs buffers for it: made for each stream, they
// were most of the garbage a call over HTTP made beyond the go-sdk's own.
// So a reader takes its buffers from a pool when it first reads, and gives
// them back once it has returned the stream's end: it is done with them
// then, every later Read returning the same error without touching them.
// A reader left before its end leaves its buffers to the collector.

// ReadSize is the size of a pooled read buffer: what the go-sdk reads at
// once (a bufio.Reader's default size).
const ReadSize = 4 << 10

// maxPooled bounds the capacity of a buffer given back: one that grew for a
// large event is left to the collector.
const maxPooled = 64 << 10

// Scratch holds the buffers of one stream reader.
type Scratch struct {
	In      []byte // read buffer, ReadSize long
	Out     []byte // bytes ready for the reader
	Held    []byte // lines or events held back
	Data    []byte // the data of an event
	Line    []byte // the current line
	Clamped []byte // the clamped bytes of a read
}

var scratchPool = sync.Pool{New: func() any { return &Scratch{In: make([]byte, ReadSize)} }}

// GetScratch returns buffers from the pool, each empty (In aside).
func GetScratch() *Scratch { return scratchPool.Get().(*Scratch) }

// Put gives s back to the pool; s must not be used afterwards.
func (s *Scratch) Put() {
	s.Out = keep(s.Out)
	s.Held = keep(s.Held)
	s.Data = keep(s.Data)
	s.Line = keep(s.Line)
	s.Clamped = keep(s.Clamped)
	scratchPool.Put(s)
}

// keep returns b emptied, or nil when it is too large to pool.
func keep(b []byte) []byte {
	if cap(b) > maxPooled {
		return nil
	}
	return b[:0]
}

// takeBuffer returns a read buffer for reads of n bytes: a pooled one
// with its Scratch for up to ReadSize, else one of its own (at most 32 KB).
func takeBuffer(n int) (*Scratch, []byte) {
	if n <= ReadSize {
		sc := GetScratch()
		return sc, sc.In
	}
	return nil, make([]byte, min(n, 32<<10))
}
