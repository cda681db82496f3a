package resource

// validJSON reports whether b is exactly one JSON value with optional
// surrounding whitespace. It accepts what encoding/json.Valid accepts,
// including its nesting limit, and is several times faster on the short
// documents tools return. Like json.Valid it does not check that strings
// are valid UTF-8.
func validJSON(b []byte) bool {
	i, ok := jsonValue(b, skipJSONSpace(b, 0), 1)
	return ok && skipJSONSpace(b, i) == len(b)
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonValue validates the value starting at b[i], at nesting depth depth
// (counting the value itself if it is an array or object), and returns the
// index after it.
func jsonValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '{', '[':
		return jsonContainer(b, i, depth)
	case '"':
		return jsonString(b, i)
	case 't':
		return jsonLiteral(b, i, "true")
	case 'f':
		return jsonLiteral(b, i, "false")
	case 'n':
		return jsonLiteral(b, i, "null")
	}
	return jsonNumber(b, i)
}

// jsonContainer validates the object or array opening at b[i]: its
// members are "key": value pairs in an object and bare values in an array.
func jsonContainer(b []byte, i, depth int) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	object := b[i] == '{'
	end := byte(']')
	if object {
		end = '}'
	}
	i = skipJSONSpace(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i, ok = jsonKey(b, i); !ok {
				return i, false
			}
		}
		if i, ok = jsonValue(b, i, depth+1); !ok {
			return i, false
		}
		i = skipJSONSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipJSONSpace(b, i+1)
		case end:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// jsonKey validates an object member's key and its colon, returning the
// index of the member's value.
func jsonKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := jsonString(b, i)
	if !ok {
		return i, false
	}
	i = skipJSONSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return skipJSONSpace(b, i+1), true
}

func jsonString(b []byte, i int) (int, bool) {
	for i++; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func jsonLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// jsonNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, true
}
