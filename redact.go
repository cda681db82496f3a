package toolkit

import (
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
