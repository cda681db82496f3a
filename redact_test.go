package toolkit

import (
	"bytes"
	"fmt"
	"log/slog"
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

func TestRedactHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(RedactHandler(slog.NewTextHandler(&buf, nil)))
	l = l.With("base", "https://user:pw@h.example/mcp")
	l.Info("connecting to stdio:server?env=TOKEN%3Dsecret1 now",
		"url", "https://h.example/mcp?api_key=secret2#frag",
		"err", fmt.Errorf(`connector "http://u:secret3@h/mcp": refused`),
		slog.Group("g", "inner", "wss://h/ws?token=secret4,more=secret5"),
		"plain", "no url here",
		"count", 3,
	)
	out := buf.String()
	for _, secret := range []string{"secret1", "secret2", "secret3", "secret4", "secret5", "pw@", "frag"} {
		if strings.Contains(out, secret) {
			t.Errorf("log line leaks %q: %s", secret, out)
		}
	}
	for _, kept := range []string{"stdio:server", "https://h.example/mcp", "http://h/mcp", "wss://h/ws", "no url here", "count=3", "refused"} {
		if !strings.Contains(out, kept) {
			t.Errorf("log line lost %q: %s", kept, out)
		}
	}
	if h := RedactHandler(l.Handler()); h != l.Handler() {
		t.Error("RedactHandler wrapped a redacting handler again")
	}
	if RedactLogger(l) != l {
		t.Error("RedactLogger wrapped a redacting logger again")
	}
}

// FuzzRedactText checks that redaction never panics, never grows a URL's
// secrets back and leaves text without URLs alone.
func FuzzRedactText(f *testing.F) {
	for _, s := range []string{"", "a://b", "x https://u:p@h/p?q=1 y", "stdio:", "://", "stdio:a?env=K%3DV", "ftp://h#f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := redactText(s)
		if !mayHoldURL(s) && got != s {
			t.Fatalf("redactText(%q) = %q changed text without a URL", s, got)
		}
		if redactText(got) != got {
			t.Fatalf("redactText is not idempotent on %q: %q then %q", s, got, redactText(got))
		}
	})
}

// TestToolkitLoggerRedacts: whatever logger the application gives, the
// toolkit's own lines go through RedactHandler.
func TestToolkitLoggerRedacts(t *testing.T) {
	var buf bytes.Buffer
	tk, err := New(WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	tk.Logger().Warn("connector failed", "url", "https://u:topsecret@h.example/mcp")
	if strings.Contains(buf.String(), "topsecret") || !strings.Contains(buf.String(), "h.example/mcp") {
		t.Errorf("toolkit log: %s", buf.String())
	}
}
