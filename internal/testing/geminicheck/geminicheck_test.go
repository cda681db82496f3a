package geminicheck

import (
	"strings"
	"testing"
)

func TestDeclaration(t *testing.T) {
	ok := []string{
		`{"name":"f"}`,
		`{"name":"get_weather","description":"d","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}`,
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"u":{"anyOf":[{"type":"STRING","enum":["a"]},{"type":"INTEGER","format":"int64"}],"nullable":true},"l":{"type":"ARRAY","items":{"type":"NUMBER","minimum":1},"maxItems":3}}}}`,
	}
	for _, d := range ok {
		if err := Declaration([]byte(d)); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	bad := map[string]string{
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"description":"d"}}}}`:                            "type must be specified",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"INTEGER","enum":["1"]}}}}`:                "only allowed for [STRING]",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","enum":[1]}}}}`:                   "not a string",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"ARRAY"}}}}`:                               "items: missing field",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"ARRAY","items":{}}}}}`:                    "type must be specified",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","items":{"type":"STRING"}}}}}`:    "only allowed for [ARRAY]",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","format":"email"}}}}`:             "not documented",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"OBJECT","properties":{}}}}}`:              "non-empty",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING"}},"required":["y"]}}`:             "not a property",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"string"}}}}`:                              "unknown type",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","additionalProperties":false}}}}`: "not in Gemini's schema",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"INTEGER","minLength":1}}}}`:               "only allowed for [STRING]",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","minimum":1}}}}`:                  "only allowed for [NUMBER INTEGER]",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","maxLength":"3"}}}}`:              "not a number",
		`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"anyOf":[]}}}}`:                                   "non-empty list",
		`{"name":"f","parameters":{"type":"OBJECT"}}`:                                                                   "non-empty",
		`{"name":"1f"}`:                    "bad name",
		`{"name":"f","strict":true}`:       "unknown field",
		`not json`:                         "declaration",
		`{"name":"f","parameters":"text"}`: "not an OBJECT",
	}
	for d, want := range bad {
		err := Declaration([]byte(d))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error saying %q", d, err, want)
		}
	}
	deep := `{"type":"STRING"}`
	for range 300 {
		deep = `{"type":"ARRAY","items":` + deep + `}`
	}
	if err := Declaration([]byte(`{"name":"f","parameters":{"type":"OBJECT","properties":{"x":` + deep + `}}}`)); err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Errorf("deep schema: %v", err)
	}
}
