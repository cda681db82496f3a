package toolkit

import "reflect"

// isPointer reports whether v's dynamic type is a pointer, so that v can be
// used as a map key and compared without risk of a panic.
func isPointer(v any) bool {
	return v != nil && reflect.TypeOf(v).Kind() == reflect.Pointer
}

// identical reports whether a and b are the same item value. Values whose
// dynamic types are not comparable are never identical.
func identical(a, b any) (same bool) {
	if isPointer(a) || isPointer(b) {
		return a == b
	}
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// reflectIsNil reports whether a pointer-typed v is a nil pointer.
func reflectIsNil(v any) bool { return reflect.ValueOf(v).IsNil() }
