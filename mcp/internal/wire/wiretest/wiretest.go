// Package wiretest holds what the tests of the connector and of package
// wire share: deeply nested JSON and a reader that returns a few bytes at
// a time.
package wiretest

import (
	"io"
	"strings"
)

// DeepJSON returns an object nested n levels deep, with a string holding
// brackets at the bottom.
func DeepJSON(n int) string {
	return strings.Repeat(`{"a":[`, n/2) + `"[{\"x"` + strings.Repeat(`]}`, n/2)
}

// ChunkReader returns at most N bytes of B a read.
type ChunkReader struct {
	B []byte
	N int
}

// Read implements io.Reader.
func (r *ChunkReader) Read(p []byte) (int, error) {
	if len(r.B) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.N)], r.B)
	r.B = r.B[n:]
	return n, nil
}
