package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
)

func TestParsePointer(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"/", []string{""}},
		{"/a/b", []string{"a", "b"}},
		{"/a~1b/c~0d", []string{"a/b", "c~d"}},
		{"/~01", []string{"~1"}},
		{"/items/0", []string{"items", "0"}},
	} {
		got, err := parsePointer(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %q %v, want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"a", "/a~", "/a~2", "/~", strings.Repeat("/x", maxPointerTokens+1)} {
		if _, err := parsePointer(bad); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%q: %v, want ErrBadParameter", bad, err)
		}
	}
}

func TestConditions(t *testing.T) {
	args := map[string]any{}
	if err := json.Unmarshal([]byte(`{"mode":"delete","n":3,"path":"/etc/passwd","tags":["a","b"],"opt":null,"a/b":{"~":true}}`), &args); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	yes, no := true, false
	for _, tt := range []struct {
		c    Condition
		want bool
	}{
		{Condition{Path: "/mode", Equals: "delete"}, true},
		{Condition{Path: "/mode", Equals: "read"}, false},
		{Condition{Path: "/n", Equals: 3}, true},
		{Condition{Path: "/n", Equals: 3.0}, true},
		{Condition{Path: "/n", Equals: "3"}, false},
		{Condition{Path: "/path", Matches: str("/etc/*")}, true},
		{Condition{Path: "/n", Matches: str("*")}, false},
		{Condition{Path: "/tags/1", Equals: "b"}, true},
		{Condition{Path: "/tags/01", Present: &yes}, false},
		{Condition{Path: "/tags/2", Present: &no}, true},
		{Condition{Path: "/tags", Equals: []any{"a", "b"}}, true},
		{Condition{Path: "/opt", Present: &yes}, true},
		{Condition{Path: "/missing", Present: &no}, true},
		{Condition{Path: "/missing", Equals: "x"}, false},
		{Condition{Path: "/a~1b/~0", Equals: true}, true},
		{Condition{Path: "/mode/x", Present: &yes}, false},
	} {
		c, err := compileCondition(tt.c)
		if err != nil {
			t.Fatalf("%+v: %v", tt.c, err)
		}
		if got := c.holds(args); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.c, got, tt.want)
		}
	}
	for _, bad := range []Condition{
		{Path: "/a"},
		{Path: "/a", Equals: 1, Present: &yes},
		{Path: "a", Equals: 1},
		{Path: "/a", Matches: str(`x\`)},
		{Path: "/a", Equals: func() {}},
	} {
		if _, err := compileCondition(bad); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%+v: %v, want ErrBadParameter", bad, err)
		}
	}
}

func TestDecodeArguments(t *testing.T) {
	v, err := decodeArguments([]byte(`{"a":[1,{"b":2.5}],"c":"x"}`))
	if err != nil || !reflect.DeepEqual(v, map[string]any{"a": []any{1.0, map[string]any{"b": 2.5}}, "c": "x"}) {
		t.Fatalf("%v %v", v, err)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `{`, `{} {}`, `not json`,
		strings.Repeat("[", maxArgumentDepth+2) + strings.Repeat("]", maxArgumentDepth+2)} {
		if _, err := decodeArguments([]byte(bad)); err == nil {
			t.Errorf("%q decodes", bad)
		}
	}
}

// FuzzArguments checks that pointers and argument documents never panic
// the engine, and that what decodes agrees with encoding/json.
func FuzzArguments(f *testing.F) {
	for _, s := range [][2]string{{"/a", `{"a":1}`}, {"/a~1b", `{"a/b":[1]}`}, {"/0", `[1]`}, {"/~", `{}`},
		{"", `{"a":1,"a":2}`}, {"/a/999999999999", `{"a":[]}`}, {"/x", strings.Repeat("[", 200)}, {"/-", `[1,2]`}} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, pointer string, doc []byte) {
		path, err := parsePointer(pointer)
		if err != nil {
			return
		}
		v, err := decodeArguments(doc)
		if err != nil {
			return
		}
		var std any
		if err := json.Unmarshal(doc, &std); err != nil {
			t.Fatalf("%q decodes here but not with encoding/json: %v", doc, err)
		}
		lookupPointer(v, path)
	})
}
