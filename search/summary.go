package search

import (
	"strings"
	"unicode/utf8"
)

// SummaryLength is the longest summary Summary returns, in characters.
const SummaryLength = 160

// Summary returns the first sentence of a description on one line: the
// text before its first blank line, white space collapsed, up to the
// first word that ends a sentence (".", "!" or "?"; not "e.g."), at most
// SummaryLength characters (cut at a word, with "…"). It is what a search
// answer says of each tool.
func Summary(description string) string {
	description = strings.ToValidUTF8(description, "")
	if i := strings.Index(description, "\n\n"); i >= 0 && strings.TrimSpace(description[:i]) != "" {
		description = description[:i]
	}
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(description) {
		wn := utf8.RuneCountInString(w)
		if n > 0 {
			if n+1+wn > SummaryLength {
				return cutSummary(b.String())
			}
			b.WriteByte(' ')
			n++
		} else if wn > SummaryLength {
			return string([]rune(w)[:SummaryLength-1]) + "…"
		}
		b.WriteString(w)
		n += wn
		if endsSentence(w) {
			break
		}
	}
	return b.String()
}

// cutSummary ends a summary cut short with "…", within SummaryLength.
func cutSummary(s string) string {
	s = strings.TrimRight(s, " ,;:-")
	if utf8.RuneCountInString(s) >= SummaryLength {
		s = string([]rune(s)[:SummaryLength-1])
	}
	return s + "…"
}

// endsSentence reports whether a word ends a sentence: it ends with '.',
// '!' or '?' and holds no other '.' ("e.g.", "v1.2." do not).
func endsSentence(w string) bool {
	if w == "" {
		return false
	}
	switch w[len(w)-1] {
	case '!', '?':
		return true
	case '.':
		return len(w) > 1 && !strings.Contains(w[:len(w)-1], ".")
	}
	return false
}
