package toolkit

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"

	"github.com/llmkit/toolkit/internal/names"
)

// InferNamespace derives a namespace from a connector URL, the name a
// person would choose:
//
//   - an HTTP URL gives the last path segment that is not a generic
//     endpoint name ("mcp", "sse", "v1", ...), else the host name without
//     common prefixes ("www.", "mcp.", "api.") and its top level domain
//     ("https://mcp.github.com/mcp" gives "github"); a loopback host
//     ("localhost", "127.0.0.1", "[::1]") gives "localhost" and its port
//     ("http://127.0.0.1:8080/mcp" gives "localhost-8080");
//   - a stdio URL gives the program's name ("stdio:///usr/bin/weather-server"
//     gives "weather-server"), or, for a program that runs another one (an
//     interpreter or a package runner: node, npx, uvx, python -m, deno,
//     bun, ...), the name of the script or package it runs: "node
//     build/index.js" gives "index", "npx -y @acme/server-github" gives
//     "github", "uvx mcp-server-fetch" gives "fetch", "python -m
//     weather_mcp" gives "weather_mcp". The words "mcp" and "server" around
//     a package name are dropped.
//
// The result is made a valid namespace (lower case; other characters
// become '-'). It wraps ErrBadParameter when nothing usable remains.
func InferNamespace(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("%w: connector URL %q: not an absolute URL", ErrBadParameter, RedactURL(rawURL))
	}
	if u.Scheme == "stdio" {
		if ns := stdioNamespace(u); ns != "" {
			return ns, nil
		}
	} else if ns := pathNamespace(u.Path); ns != "" {
		return ns, nil
	}
	if ns := hostNamespace(u); ns != "" {
		return ns, nil
	}
	return "", fmt.Errorf("%w: cannot infer a namespace from %q; use AddConnectorNS", ErrBadParameter, RedactURL(rawURL))
}

var genericSegment = map[string]bool{"": true, "mcp": true, "sse": true, "message": true, "messages": true, "v1": true, "v2": true, "api": true, "stream": true, "index": true}

// pathNamespace returns the namespace of the last meaningful segment of p.
func pathNamespace(p string) string {
	segs := strings.Split(p, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		seg := segs[i]
		if ext := path.Ext(seg); ext != "" && ext != seg {
			seg = strings.TrimSuffix(seg, ext)
		}
		if genericSegment[strings.ToLower(seg)] {
			continue
		}
		if ns := toNamespace(seg); ns != "" {
			return ns
		}
	}
	return ""
}

// hostNamespace names an HTTP server by its host.
func hostNamespace(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return ""
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		if port := u.Port(); port != "" {
			return toNamespace("localhost-" + port)
		}
		return "localhost"
	}
	if net.ParseIP(host) != nil {
		return toNamespace("host-" + host)
	}
	labels := strings.Split(host, ".")
	for len(labels) > 1 && (labels[0] == "www" || labels[0] == "mcp" || labels[0] == "api") {
		labels = labels[1:]
	}
	if len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	return toNamespace(strings.Join(labels, "-"))
}

// launchers are programs that run another program named by their
// arguments; the value tells how to find it: "" the first argument that is
// not a flag, "-m" the argument after -m (Python's module form).
var launchers = map[string]string{
	"node": "", "nodejs": "", "deno": "", "bun": "", "bunx": "", "npx": "", "pnpx": "", "tsx": "", "ts-node": "",
	"uvx": "", "pipx": "", "uv": "", "python": "-m", "python3": "-m", "py": "-m", "ruby": "", "php": "", "java": "",
	"go": "", "dotnet": "", "pnpm": "", "yarn": "", "npm": "",
}

// launcherVerbs are first arguments of launchers that say what to do, not
// what to run ("uv run x", "pipx run x", "deno run x", "go run x", "npm exec x").
var launcherVerbs = map[string]bool{"run": true, "exec": true, "x": true, "dlx": true, "tool": true}

// stdioNamespace names a stdio server after its program, or after what its
// launcher runs.
func stdioNamespace(u *url.URL) string {
	prog := u.Opaque
	if prog == "" {
		prog = u.Path
	}
	base := path.Base(strings.ReplaceAll(prog, "\\", "/"))
	base = strings.TrimSuffix(strings.ToLower(base), ".exe")
	mode, launcher := launchers[base]
	if !launcher {
		return pathNamespace(prog)
	}
	args := u.Query()["arg"]
	target := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if mode == "-m" {
			if a == "-m" && i+1 < len(args) {
				target = args[i+1]
				break
			}
			if !strings.HasPrefix(a, "-") {
				target = a // python script.py
				break
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			if a == "--from" || a == "--package" || a == "-p" || a == "--with" {
				i++ // the option's value is not the program
			}
			continue
		}
		if launcherVerbs[a] && target == "" && i+1 < len(args) {
			continue
		}
		target = a
		break
	}
	if target == "" {
		return pathNamespace(prog)
	}
	return toNamespace(packageName(target))
}

// packageName reduces what a launcher runs to its name: the last path
// element without extension or version ("@acme/server-x@1.2" gives
// "server-x"), without the words "mcp" and "server" around it.
func packageName(s string) string {
	s = strings.ReplaceAll(s, "\\", "/")
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i]
	}
	if ext := path.Ext(s); ext != "" && ext != s && !strings.ContainsAny(ext[1:], "0123456789") {
		s = strings.TrimSuffix(s, ext)
	}
	if i := strings.IndexAny(s, "=<>~"); i > 0 {
		s = s[:i] // pip version specifiers
	}
	trimmed := strings.ToLower(s)
	for _, affix := range []string{"mcp-server-", "mcp_server_", "server-mcp-", "mcp-", "server-"} {
		trimmed = strings.TrimPrefix(trimmed, affix)
	}
	for _, affix := range []string{"-mcp-server", "_mcp_server", "-server-mcp", "-mcp", "-server"} {
		trimmed = strings.TrimSuffix(trimmed, affix)
	}
	if trimmed == "" || genericSegment[trimmed] {
		return s
	}
	return trimmed
}

// toNamespace maps s to a valid namespace, or "".
func toNamespace(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	ns := strings.TrimRight(b.String(), "-")
	if ns == "" {
		return ""
	}
	if ns[0] >= '0' && ns[0] <= '9' {
		ns = "mcp-" + ns
	}
	if len(ns) > names.MaxName {
		ns = strings.TrimRight(ns[:names.MaxName], "-")
	}
	if names.IsReservedNamespace(ns) || !names.IsNamespace(ns) {
		return ""
	}
	return ns
}
