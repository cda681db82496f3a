package oauth

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestServerError: an authorization server's error answer reads as one
// bounded line with its code and description, whatever its body.
func TestServerError(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	long := strings.Repeat("é", 300)
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   string
	}{
		{"zod error", 400, nil,
			`{"error":"invalid_request","error_description":"[\n  {\n    \"expected\": \"string\",\n    \"path\": [\n      \"client_id\"\n    ]\n  }\n]"}`,
			`authorization server: token answered 400 Bad Request: invalid_request ([ { "expected": "string", "path": [ "client_id" ] } ])`},
		{"rate limit", 429, http.Header{"Retry-After": {"30"}},
			`{"error":"too_many_requests","error_description":"slow down","client_secret":"secret-x"}`,
			"authorization server: token answered 429 Too Many Requests: too_many_requests (slow down); retry after 30s"},
		{"html", 503, http.Header{"Retry-After": {now.Add(time.Minute).Format(http.TimeFormat)}},
			"<html><body>secret-page\nDown for maintenance</body></html>",
			"authorization server: token answered 503 Service Unavailable; retry after 1m0s"},
		{"odd code", 400, nil, `{"error":"a\"b\nc","error_description":42}`,
			"authorization server: token answered 400 Bad Request"},
		{"long", 400, nil, `{"error":"invalid_client","error_description":"` + long + `"}`,
			"authorization server: token answered 400 Bad Request: invalid_client (" + strings.Repeat("é", 100) + "…)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			resp := &http.Response{StatusCode: tc.status, Header: h, Body: io.NopCloser(strings.NewReader(tc.body))}
			se := readServerError("token", resp, now)
			if got := se.Error(); got != tc.want {
				t.Errorf("Error() = %q\nwant      %q", got, tc.want)
			}
			kept, err := io.ReadAll(resp.Body)
			mustNotErr(t, err)
			if strings.Contains(string(kept), "secret") || strings.ContainsAny(string(kept), "\n") {
				t.Errorf("the body passed on keeps %q", kept)
			}
		})
	}
}

// TestParseRetryAfter: seconds and dates, bounded; anything else is no
// wait.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                        0,
		"0":                       0,
		" 120 ":                   2 * time.Minute,
		"-5":                      0,
		"1.5":                     0,
		"99999999999999999999999": MaxRetryAfter,
		"86400":                   MaxRetryAfter,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		"tomorrow": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzServerError: no body, status or header makes the error more than
// one bounded line, or makes it quote what the body holds beside its
// error and description.
func FuzzServerError(f *testing.F) {
	f.Add(400, "", `{"error":"invalid_request","error_description":"line one\nline two"}`)
	f.Add(429, "120", `{"error":"too_many_requests"}`)
	f.Add(503, "Wed, 21 Oct 2015 07:28:00 GMT", "<html>secret</html>")
	f.Add(401, "x", `{"error":"invalid_client","error_description":"\u0000\u001b[31mred\r\n","secret":"s"}`)
	f.Add(400, "", `{"error":["a"],"error_description":{"b":1}}`)
	f.Add(400, "", "\xff\xfe{\"error\":\"\xff\"}")
	f.Add(999, "-1", `null`)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, retryAfter, body string) {
		se := parseServerError("token", status, http.Header{"Retry-After": {retryAfter}}, []byte(body), now)
		msg := se.Error()
		if strings.ContainsAny(msg, "\r\n\x00") || !utf8.ValidString(msg) {
			t.Fatalf("not one clean line: %q", msg)
		}
		if len(se.Description) > MaxErrorDescription+len("…") || len(se.Code) > maxErrorCode {
			t.Fatalf("unbounded: %q", msg)
		}
		if se.RetryAfter < 0 || se.RetryAfter > MaxRetryAfter {
			t.Fatalf("RetryAfter %v", se.RetryAfter)
		}
		if strings.Contains(msg, "secret") && !strings.Contains(se.Code+se.Description, "secret") {
			t.Fatalf("the body leaked: %q", msg)
		}
	})
}
