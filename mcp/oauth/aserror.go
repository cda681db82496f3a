package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ServerError is an error answer of an authorization server's
// registration or token endpoint (RFC 6749 §5.2, RFC 7591 §3.2.2), as
// people read it: one line with the endpoint, the HTTP status, the error
// code and its description, cut to [MaxErrorDescription] bytes. The
// answer's body itself is never quoted: it may be long, span lines, or
// echo what the client sent. The error of an authorization that failed on
// such an answer wraps it (errors.As).
type ServerError struct {
	// Endpoint names the endpoint that answered: "registration", "token"
	// or "authorization server".
	Endpoint string
	// Status is the HTTP status code.
	Status int
	// Code is the OAuth error code ("invalid_client", "invalid_grant",
	// ...), empty when the body held none.
	Code string
	// Description is the error_description, on one line and cut.
	Description string
	// RetryAfter is how long the server asked the client to wait (its
	// Retry-After header, on 429 Too Many Requests and 503 Service
	// Unavailable; at most [MaxRetryAfter]), or zero.
	RetryAfter time.Duration
}

// Error implements error: "authorization server: registration answered
// 429 Too Many Requests: too_many_requests (Slow down); retry after 1m0s".
func (e *ServerError) Error() string {
	var b strings.Builder
	b.WriteString("authorization server: ")
	b.WriteString(e.Endpoint)
	b.WriteString(" answered ")
	b.WriteString(strconv.Itoa(e.Status))
	if t := http.StatusText(e.Status); t != "" {
		b.WriteString(" " + t)
	}
	if e.Code != "" {
		b.WriteString(": " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(" (" + e.Description + ")")
	}
	if e.RetryAfter > 0 {
		b.WriteString("; retry after " + e.RetryAfter.String())
	}
	return b.String()
}

// Bounds of what is read and kept of an authorization server's error
// answer.
const (
	// MaxErrorDescription bounds the description a [ServerError] keeps,
	// in bytes.
	MaxErrorDescription = 200
	// MaxRetryAfter bounds the wait a Retry-After header may ask for.
	MaxRetryAfter = time.Hour
	// maxErrorBody bounds the error body read.
	maxErrorBody = 64 << 10
	// maxErrorCode bounds the error code kept: codes are short ASCII
	// words.
	maxErrorCode = 64
)

// parseServerError reads the error answer of an authorization server:
// status, the error and error_description of a JSON body (anything else
// in it is dropped), and Retry-After on 429 and 503 (now dates it).
func parseServerError(endpoint string, status int, header http.Header, body []byte, now time.Time) *ServerError {
	e := &ServerError{Endpoint: endpoint, Status: status}
	var m struct {
		Code        any `json:"error"`
		Description any `json:"error_description"`
	}
	if json.Unmarshal(body, &m) == nil {
		if s, ok := m.Code.(string); ok {
			e.Code = errorCode(s)
		}
		if s, ok := m.Description.(string); ok {
			e.Description = oneLine(s, MaxErrorDescription)
		}
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.RetryAfter = parseRetryAfter(header.Get("Retry-After"), now)
	}
	return e
}

// errorCode keeps an error code when it is one: printable ASCII without
// quotes or backslashes (RFC 6749 §5.2), bounded.
func errorCode(s string) string {
	if s == "" || len(s) > maxErrorCode {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return ""
		}
	}
	return s
}

// oneLine returns s on one line: runs of spaces, line breaks and other
// control characters become one space, invalid UTF-8 is dropped, and the
// result is cut to at most max bytes (on a character boundary, marked
// with "…").
func oneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "") {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > max {
			return strings.TrimRight(b.String(), " ") + "…"
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number
// of seconds or an HTTP date, which now turns into a wait. Anything else,
// a wait in the past and an empty header give zero; a wait longer than
// MaxRetryAfter gives MaxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter // too large even for uint64
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// readServerError reads the error answer resp of an authorization server
// (a bounded part of its body), and gives resp a body that holds only
// what is kept of it, as JSON: the error and its description. The SDK and
// golang.org/x/oauth2, which quote error bodies, quote that then.
func readServerError(endpoint string, resp *http.Response, now time.Time) *ServerError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	e := parseServerError(endpoint, resp.StatusCode, resp.Header, body, now)
	kept := map[string]string{}
	if e.Code != "" {
		kept["error"] = e.Code
	}
	if e.Description != "" {
		kept["error_description"] = e.Description
	}
	compact, _ := json.Marshal(kept)
	resp.Body = io.NopCloser(bytes.NewReader(compact))
	resp.ContentLength = int64(len(compact))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	resp.Uncompressed = true
	return e
}
