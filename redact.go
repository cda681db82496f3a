package toolkit

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// RedactURL returns rawURL without the parts that may carry secrets: user
// information, the query and the fragment. Connector URLs hold tokens in
// those places (an "https://user:token@host/mcp", an "?api_key=", a stdio
// server's "?env=TOKEN%3D..."), so logs, health reports and anything else
// shown to people should use this form. The toolkit's own logs do.
func RedactURL(rawURL string) string {
	cut := rawURL
	if i := strings.IndexAny(cut, "?#"); i >= 0 {
		cut = cut[:i]
	}
	u, err := url.Parse(cut)
	if err != nil {
		// Unparsable: keep the scheme at most, which cannot hold a secret.
		if i := strings.Index(cut, ":"); i > 0 && !strings.ContainsAny(cut[:i], "/@") {
			return cut[:i] + ":…"
		}
		return "…"
	}
	if u.User != nil {
		u.User = nil
		return u.String()
	}
	return cut
}

// RedactHandler returns a handler that passes every record to h with the
// secrets of URLs removed (see RedactURL) from its message and from every
// string attribute, error and group, wherever in the text the URL stands.
// It is the one place the toolkit's log lines go through: New, the
// connector and the MCP server wrap the loggers they are given with it, so
// a log line added later cannot leak a token either. Wrapping a redacting
// handler again returns it unchanged.
func RedactHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(redactHandler); ok || h == nil {
		return h
	}
	return redactHandler{h}
}

// RedactLogger returns l with its handler wrapped by RedactHandler, or a
// redacting slog.Default() when l is nil.
func RedactLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	if _, ok := l.Handler().(redactHandler); ok {
		return l
	}
	return slog.New(redactHandler{l.Handler()})
}

type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, redactText(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

// redactAttr removes URL secrets from a's value.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); mayHoldURL(s) {
			a.Value = slog.StringValue(redactText(s))
		} else {
			a.Value = v
		}
	case slog.KindGroup:
		as := v.Group()
		red := make([]slog.Attr, len(as))
		for i, x := range as {
			red[i] = redactAttr(x)
		}
		a.Value = slog.GroupValue(red...)
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			a.Value = v
			return a
		}
		if mayHoldURL(s) {
			a.Value = slog.StringValue(redactText(s))
		} else {
			a.Value = v
		}
	default:
		a.Value = v
	}
	return a
}

// mayHoldURL reports whether s may contain a URL redactText would change.
func mayHoldURL(s string) bool {
	return strings.Contains(s, "://") || strings.Contains(s, "stdio:")
}

// redactText replaces every URL in s that carries user information, a
// query or a fragment by its RedactURL form. A URL runs from its scheme to
// the next white space, quote or angle bracket (a comma or a parenthesis
// may belong to its query, which is dropped anyway).
func redactText(s string) string {
	if !mayHoldURL(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		start, end, ok := nextURL(s, i)
		if !ok {
			break
		}
		if u := s[start:end]; strings.ContainsAny(u, "@?#") {
			b.WriteString(s[last:start])
			b.WriteString(RedactURL(u))
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// nextURL finds the next URL in s at or after i: a scheme (letters,
// digits, '+', '-', '.') followed by "://", or "stdio:".
func nextURL(s string, i int) (start, end int, ok bool) {
	for j := i; j < len(s); j++ {
		var rest int
		switch {
		case strings.HasPrefix(s[j:], "://"):
			rest = j + 3
		case strings.HasPrefix(s[j:], "stdio:"):
			start, rest = j, j+len("stdio:")
			return start, urlEnd(s, rest), true
		default:
			continue
		}
		start = j
		for start > i && isSchemeByte(s[start-1]) {
			start--
		}
		if start == j {
			continue // "://" with no scheme before it
		}
		return start, urlEnd(s, rest), true
	}
	return 0, 0, false
}

func urlEnd(s string, i int) int {
	for i < len(s) && !strings.ContainsRune(" \t\r\n\"'<>`", rune(s[i])) {
		i++
	}
	return i
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
