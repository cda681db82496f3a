package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummary(t *testing.T) {
	long := strings.Repeat("word ", 60)
	for in, want := range map[string]string{
		"Read a file. Then more.":                              "Read a file.",
		"   Get the configuration\n   as JSON.  Config has...": "Get the configuration as JSON.",
		"Use e.g. this tool. Second.":                          "Use e.g. this tool.",
		"Release v1.2. notes":                                  "Release v1.2. notes",
		"Notion | Retrieve a user Error Responses: 400: 400":   "Notion | Retrieve a user Error Responses: 400: 400",
		"First paragraph without stop\n\nSecond paragraph.":    "First paragraph without stop",
		"Is it done? Yes.":                                     "Is it done?",
		"":                                                     "",
		"\xff\xfebad bytes.":                                   "bad bytes.",
		long:                                                   strings.TrimSpace(strings.Repeat("word ", 32)) + "…",
		strings.Repeat("x", 500):                               strings.Repeat("x", SummaryLength-1) + "…",
	} {
		got := Summary(in)
		if got != want {
			t.Errorf("Summary(%.40q) = %q, want %q", in, got, want)
		}
		if utf8.RuneCountInString(got) > SummaryLength || strings.ContainsAny(got, "\n\t") {
			t.Errorf("Summary(%.40q) = %q: too long or not one line", in, got)
		}
	}
}

// FuzzSummary: a summary is valid UTF-8, one line, and within
// SummaryLength, whatever the description.
func FuzzSummary(f *testing.F) {
	for _, s := range []string{"Read a file. More.", "\xff", strings.Repeat("ab ", 200), "a\n\n\nb", "é.é.é. x", "\u2028line\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Summary(s)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > SummaryLength || strings.ContainsAny(got, "\n\r\t") {
			t.Errorf("Summary(%q) = %q", s, got)
		}
	})
}
