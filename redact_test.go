package toolkit

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://user:s3cret@mcp.example.com/mcp?api_key=s3cret#s3cret", "https://mcp.example.com/mcp"},
		{"stdio:npx?arg=-y&arg=server&env=TOKEN%3Ds3cret", "stdio:npx"},
		{"stdio:///usr/bin/server?env=K%3Ds3cret", "stdio:///usr/bin/server"},
		{"connector:user", "connector:user"},
		{"http://[::1:s3cret/mcp", "http:…"},
		{"s3cret@%zz", "…"},
		{"", ""},
	} {
		got := RedactURL(tc.in)
		if got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("RedactURL(%q) leaks the secret: %q", tc.in, got)
		}
	}
}

func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://u:p@h/x?q=1#f", "stdio:cmd?env=A%3Db", "%", "a:b@c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactURL(raw)
		if strings.ContainsAny(got, "?#") {
			t.Errorf("RedactURL(%q) = %q keeps a query or fragment", raw, got)
		}
		if u, err := url.Parse(raw); err == nil && u.User != nil && u.User.String() != "" {
			if strings.Contains(got, u.User.String()+"@") {
				t.Errorf("RedactURL(%q) = %q keeps user information", raw, got)
			}
		}
	})
}
