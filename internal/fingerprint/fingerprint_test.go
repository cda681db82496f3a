package fingerprint

import (
	"math"
	"testing"
)

func TestOf(t *testing.T) {
	type def struct {
		Name   string         `json:"name"`
		Schema map[string]any `json:"schema,omitempty"`
	}
	a := Of(def{Name: "x", Schema: map[string]any{"type": "object", "required": []string{"a"}}})
	if len(a) != 32 {
		t.Fatalf("fingerprint of %d bytes, want 32", len(a))
	}
	if b := Of(def{Name: "x", Schema: map[string]any{"required": []string{"a"}, "type": "object"}}); b != a {
		t.Error("equal definitions have different fingerprints")
	}
	if b := Of(def{Name: "x", Schema: map[string]any{"type": "object"}}); b == a {
		t.Error("a changed schema keeps its fingerprint")
	}
	if b := Of(def{Name: "y", Schema: map[string]any{"type": "object", "required": []string{"a"}}}); b == a {
		t.Error("a changed name keeps its fingerprint")
	}
	// Values that do not marshal still get a fingerprint, equal for the
	// same failure and different from any marshalable value's.
	bad := Of(math.Inf(1))
	if len(bad) != 32 || bad != Of(math.Inf(1)) || bad == Of(0.0) {
		t.Errorf("fingerprints of an unmarshalable value: %x, %x", bad, Of(math.Inf(1)))
	}
	if Of(make(chan int)) == bad {
		t.Error("two different marshal failures share a fingerprint")
	}
}
