package codemode

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzMessageReader: whatever a worker writes, reading it ends in
// messages and an error, never a panic or a hang; a line past the bound
// is a broken bound.
func FuzzMessageReader(f *testing.F) {
	f.Add([]byte("{\"ready\":true}\n{\"call\":{\"name\":\"x\",\"args\":{}}}\n"), 64)
	f.Add([]byte(strings.Repeat("a", 5000)), 4096)
	f.Add([]byte("{\"done\":{\"text\":\"ab"), 8)
	f.Add([]byte("\n\n{}\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max = max%(8<<10) + 1
		if max <= 0 {
			max += 8 << 10
		}
		mr := newMessageReader(bytes.NewReader(in))
		mr.max = max
		for range 1000 {
			var m message
			if err := mr.read(&m); err != nil {
				if se, ok := asScriptError(err); ok && !se.Bound {
					t.Fatalf("a message too long is not a broken bound: %v", se)
				}
				return
			}
		}
	})
}
