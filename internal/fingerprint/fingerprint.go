// Package fingerprint tells whether a definition changed: both MCP faces
// compare the fingerprints of the items they hold with those of the items
// they are given, to redo only what changed.
package fingerprint

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Of returns a fixed-size digest of v's JSON form: equal for values whose
// JSON is equal, different (but for SHA-256 collisions) otherwise. A value
// that does not marshal is digested by its type and error, so it still has
// a fingerprint, which changes when the error does.
func Of(v any) string {
	fp, _ := Sized(v)
	return fp
}

// Sized returns Of(v) and the size of v's JSON form, which measures how
// much a definition holds.
func Sized(v any) (fp string, size int) {
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Appendf(nil, "unmarshalable %T: %v", v, err)
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), len(b)
}
