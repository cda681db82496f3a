package resource

import (
	"mime"
	"strings"
)

// MIME types used by the constructors.
const (
	TypeText   = "text/plain; charset=utf-8" // Text, and text with no better type
	TypeJSON   = "application/json"          // JSON
	TypeBinary = "application/octet-stream"  // bytes of unknown kind
)

// sniffLen is how much of the content net/http.DetectContentType looks at.
const sniffLen = 512

// mediaType returns the lower-case "type/subtype" part of a MIME type,
// without parameters. It allocates only when t has upper-case letters.
func mediaType(t string) string {
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	t = strings.TrimSpace(t)
	for i := 0; i < len(t); i++ {
		if c := t[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(t)
		}
	}
	return t
}

// textApplicationTypes lists the non-text/* types whose content is text.
var textApplicationTypes = map[string]bool{
	"application/json":                  true,
	"application/xml":                   true,
	"application/javascript":            true,
	"application/x-javascript":          true,
	"application/ecmascript":            true,
	"application/yaml":                  true,
	"application/x-yaml":                true,
	"application/toml":                  true,
	"application/x-ndjson":              true,
	"application/jsonl":                 true,
	"application/sql":                   true,
	"application/graphql":               true,
	"application/x-sh":                  true,
	"application/x-www-form-urlencoded": true,
}

// IsText reports whether content of the given MIME type is text: text/*,
// JSON, XML, JavaScript, YAML, TOML and the like, and any type with a +json,
// +xml or +yaml suffix (such as image/svg+xml). Parameters and case are
// ignored.
func IsText(mimeType string) bool {
	t := mediaType(mimeType)
	return strings.HasPrefix(t, "text/") ||
		textApplicationTypes[t] ||
		strings.HasSuffix(t, "+json") ||
		strings.HasSuffix(t, "+xml") ||
		strings.HasSuffix(t, "+yaml")
}

// IsJSON reports whether content of the given MIME type is a JSON document:
// application/json, text/json or any type with a +json suffix. Parameters
// and case are ignored. Line-delimited JSON is text but not JSON.
func IsJSON(mimeType string) bool {
	t := mediaType(mimeType)
	return t == "application/json" || t == "text/json" || strings.HasSuffix(t, "+json")
}

// extensionTypes maps file extensions to MIME types independently of the
// host's MIME tables, for the text formats where those tables disagree.
var extensionTypes = map[string]string{
	".txt":      "text/plain",
	".text":     "text/plain",
	".log":      "text/plain",
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".html":     "text/html",
	".htm":      "text/html",
	".css":      "text/css",
	".js":       "text/javascript",
	".mjs":      "text/javascript",
	".json":     "application/json",
	".jsonl":    "application/jsonl",
	".ndjson":   "application/x-ndjson",
	".xml":      "application/xml",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".sql":      "application/sql",
	".svg":      "image/svg+xml",
}

// extensionType returns the media type for a file extension such as ".csv",
// or "" when unknown.
func extensionType(ext string) string {
	if ext == "" {
		return ""
	}
	ext = strings.ToLower(ext)
	if t, ok := extensionTypes[ext]; ok {
		return t
	}
	t := mediaType(mime.TypeByExtension(ext))
	if !validMediaType(t) {
		return ""
	}
	return t
}

// validMediaType reports whether t is a "type/subtype" with no parameters
// that mime.ParseMediaType accepts.
func validMediaType(t string) bool {
	slash := strings.IndexByte(t, '/')
	if slash <= 0 || slash == len(t)-1 || strings.IndexByte(t[slash+1:], '/') >= 0 {
		return false
	}
	_, _, err := mime.ParseMediaType(t)
	return err == nil
}

// refine replaces an inconclusive sniffed type t with the type of the file
// extension ext: any type for application/octet-stream, a text type only for
// text/plain. Other types are returned unchanged.
func refine(t, ext string) string {
	switch t {
	case TypeBinary:
		if et := extensionType(ext); et != "" {
			return et
		}
	case "text/plain":
		if et := extensionType(ext); et != "" && IsText(et) {
			return et
		}
	}
	return t
}

// textType returns the MIME type of a text resource whose media type is t:
// text/* types get "; charset=utf-8", others are returned as they are.
func textType(t string) string {
	switch {
	case t == "text/plain":
		return TypeText
	case strings.HasPrefix(t, "text/"):
		return t + "; charset=utf-8"
	}
	return t
}
