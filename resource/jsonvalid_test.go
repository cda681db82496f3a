package resource

import (
	"encoding/json"
	"strings"
	"testing"
)

var jsonCases = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `nulll`, `True`, `0`, `-0`, `01`, `-`, `1.`, `.5`,
	`1.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-1.5e10`, `+1`, `0x10`, `1 2`, `"a"`, `"`,
	`"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\uDE00"`, `"\u12"`, `"\u12G4"`, `"\x"`, "\"a\tb\"", "\"a\x00b\"",
	"\"caf\xe9\"", `[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[1,[2,[3]]]`, `[`, `]`, `{}`, `{ }`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":{"b":[true,null]}}`,
	`{"a":1}}`, ` {"a" : [ 1 , 2 ] } `, "\t\n\r[1]\r\n", "\f1", "\u00a01", `{"a":}`, `[1]x`,
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	cases := append([]string(nil), jsonCases...)
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		cases = append(cases,
			strings.Repeat("[", depth)+strings.Repeat("]", depth),
			strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
	}
	for _, c := range cases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.40q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
