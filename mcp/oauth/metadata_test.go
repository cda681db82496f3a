package oauth

import "testing"

func TestProtectedResourceMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://gw.example.com/mcp":       "https://gw.example.com/.well-known/oauth-protected-resource/mcp",
		"https://gw.example.com/":          "https://gw.example.com/.well-known/oauth-protected-resource",
		"https://gw.example.com":           "https://gw.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/a/mcp?x=1":  "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/mcp?x=1",
		"https://gw.example.com:8443/mcp/": "https://gw.example.com:8443/.well-known/oauth-protected-resource/mcp",
	} {
		if got, err := ProtectedResourceMetadataURL(in); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/mcp", "mcp", "ftp://x/mcp", "https://x/mcp#f"} {
		if _, err := ProtectedResourceMetadataURL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
