package search

// stem reduces an English word to its stem with Porter's algorithm (M.F.
// Porter, "An algorithm for suffix stripping", 1980), so that "deleting",
// "deleted" and "delete" are one word to the index. w must be lower-case;
// a word that is not made of ASCII letters only, or is shorter than three
// letters, is returned as it is.
func stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	b := []byte(w)
	b = step1a(b)
	b = step1b(b)
	b = step1c(b)
	b = step2(b)
	b = step3(b)
	b = step4(b)
	b = step5(b)
	return string(b)
}

// consonant reports whether b[i] is a consonant: not a vowel, and not a
// y that follows a consonant.
func consonant(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(b, i-1)
	}
	return true
}

// measure returns m, the number of vowel-consonant sequences of b:
// [C](VC){m}[V].
func measure(b []byte) int {
	m, i, n := 0, 0, len(b)
	for i < n && consonant(b, i) {
		i++
	}
	for i < n {
		for i < n && !consonant(b, i) {
			i++
		}
		if i == n {
			break
		}
		for i < n && consonant(b, i) {
			i++
		}
		m++
	}
	return m
}

// hasVowel reports whether b holds a vowel.
func hasVowel(b []byte) bool {
	for i := range b {
		if !consonant(b, i) {
			return true
		}
	}
	return false
}

// doubleConsonant reports whether b ends with two equal consonants.
func doubleConsonant(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && consonant(b, n-1)
}

// cvc reports whether b ends consonant, vowel, consonant, the last not w,
// x or y ("hop", not "snow").
func cvc(b []byte) bool {
	n := len(b)
	if n < 3 || !consonant(b, n-1) || consonant(b, n-2) || !consonant(b, n-3) {
		return false
	}
	c := b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// replace replaces suffix s of b (which it must have) with r when the
// measure of what precedes s is above min.
func replace(b []byte, s, r string, min int) ([]byte, bool) {
	stem := b[:len(b)-len(s)]
	if measure(stem) > min {
		return append(stem, r...), true
	}
	return b, false
}

func step1a(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"):
		return b[:len(b)-2]
	case hasSuffix(b, "ies"):
		return b[:len(b)-2]
	case hasSuffix(b, "ss"):
		return b
	case hasSuffix(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

func step1b(b []byte) []byte {
	if hasSuffix(b, "eed") {
		b, _ = replace(b, "eed", "ee", 0)
		return b
	}
	var stem []byte
	switch {
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		stem = b[:len(b)-2]
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		stem = b[:len(b)-3]
	default:
		return b
	}
	switch {
	case hasSuffix(stem, "at"), hasSuffix(stem, "bl"), hasSuffix(stem, "iz"):
		return append(stem, 'e')
	case doubleConsonant(stem):
		if c := stem[len(stem)-1]; c != 'l' && c != 's' && c != 'z' {
			return stem[:len(stem)-1]
		}
	case measure(stem) == 1 && cvc(stem):
		return append(stem, 'e')
	}
	return stem
}

func step1c(b []byte) []byte {
	if hasSuffix(b, "y") && hasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	return b
}

// suffixRule replaces a suffix with another.
type suffixRule struct{ from, to string }

var step2Rules = []suffixRule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"},
	{"eli", "e"}, {"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"},
	{"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"},
	{"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = []suffixRule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

// applyFirst applies the first rule whose suffix b has (the longest
// match comes first in the tables), when the stem's measure is above min.
func applyFirst(b []byte, rules []suffixRule, min int) []byte {
	for _, r := range rules {
		if hasSuffix(b, r.from) {
			b, _ = replace(b, r.from, r.to, min)
			return b
		}
	}
	return b
}

func step2(b []byte) []byte { return applyFirst(b, step2Rules, 0) }
func step3(b []byte) []byte { return applyFirst(b, step3Rules, 0) }

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func step4(b []byte) []byte {
	// The longest suffix that matches decides ("ement" before "ment" and
	// "ent").
	best := ""
	for _, s := range step4Suffixes {
		if len(s) > len(best) && hasSuffix(b, s) {
			best = s
		}
	}
	if best == "" {
		return b
	}
	stem := b[:len(b)-len(best)]
	if best == "ion" && (len(stem) == 0 || (stem[len(stem)-1] != 's' && stem[len(stem)-1] != 't')) {
		return b
	}
	if measure(stem) > 1 {
		return stem
	}
	return b
}

func step5(b []byte) []byte {
	if hasSuffix(b, "e") {
		stem := b[:len(b)-1]
		if m := measure(stem); m > 1 || (m == 1 && !cvc(stem)) {
			b = stem
		}
	}
	if hasSuffix(b, "ll") && measure(b) > 1 {
		b = b[:len(b)-1]
	}
	return b
}
