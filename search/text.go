package search

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
)

// How much a word counts in each part of a tool's text, against a word of
// the head of its description (its first descHeadWords words, which say
// what the tool is for; the rest is usage notes and examples, and counts
// less). A concept (see synonymGroups) of a query's words counts
// conceptWeight as much as a word.
const (
	weightName        = 3
	weightNamespace   = 1.5
	weightTitle       = 2
	weightDescription = 1
	weightDescTail    = 0.2 // past the first descHeadWords words
	weightParamName   = 0.5
	weightParamDesc   = 0.25
	conceptWeight     = 0.7
	descHeadWords     = 30
)

// Doc is what a tool index knows of one tool or prompt: the parts
// of its definition a search looks at.
type Doc struct {
	// Key identifies the document in the index and in its hits: the name a
	// client or model knows the tool by (an exposed name, a model name).
	Key string
	// Name is the tool's own name ("read_file", "getWeather").
	Name string
	// Namespace is the source's name ("github", a connector's namespace).
	Namespace string
	// Title is the tool's human-readable title, if any.
	Title string
	// Description is the tool's description.
	Description string
	// Params are the top-level properties of the tool's input schema.
	Params []Param
}

// Param is one input property of a tool.
type Param struct {
	Name        string
	Description string
}

// DocOf returns the search document of a tool or prompt item under
// key: its name, namespace, title, description and the properties of its
// input schema. An item whose schema cannot be read is indexed without
// parameters.
func DocOf(key string, it toolkit.Item) Doc {
	d := Doc{Key: key, Name: it.Name, Namespace: it.Namespace}
	var schema *jsonschema.Schema
	switch v := it.Value.(type) {
	case toolkit.Tool:
		d.Description = v.Description()
		d.Title = v.Meta().Title
		schema, _ = v.InputSchema()
	case toolkit.Prompt:
		d.Description = v.Description()
		d.Title = v.Title()
		schema, _ = v.InputSchema()
	default:
		d.Description = it.Description()
	}
	d.Params = ParamsOf(schema)
	return d
}

// maxParams bounds the properties of one schema that are indexed.
const maxParams = 64

// ParamsOf returns the top-level properties of an input schema, by
// name, with their descriptions (at most 64).
func ParamsOf(schema *jsonschema.Schema) []Param {
	if schema == nil || len(schema.Properties) == 0 {
		return nil
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) > maxParams {
		names = names[:maxParams]
	}
	out := make([]Param, 0, len(names))
	for _, n := range names {
		p := Param{Name: n}
		if s := schema.Properties[n]; s != nil {
			p.Description = s.Description
		}
		out = append(out, p)
	}
	return out
}

// maxDocText bounds how much of one field of a document is read: the
// first 8 KiB of a description say what a tool is for.
const maxDocText = 8 << 10

// docTerms returns the weighted term frequencies of a document and its
// length (concept terms add to the frequencies, not to the length).
func docTerms(d Doc, tf map[string]float32) float32 {
	var n float32
	n += addTerms(tf, d.Name, weightName)
	n += addTerms(tf, d.Namespace, weightNamespace)
	n += addTerms(tf, d.Title, weightTitle)
	head, tail := splitDescription(d.Description)
	n += addTerms(tf, head, weightDescription)
	n += addTerms(tf, tail, weightDescTail)
	for _, p := range d.Params {
		n += addTerms(tf, p.Name, weightParamName)
		n += addTerms(tf, p.Description, weightParamDesc)
	}
	return n
}

// addTerms adds the terms of text, each counting w, to tf and returns how
// many words it added (times w).
func addTerms(tf map[string]float32, text string, w float32) float32 {
	if len(text) > maxDocText {
		text = text[:maxDocText]
	}
	var n float32
	prev := ""
	splitWords(text, func(word string) {
		s, ok, raw := indexWord(word)
		if prev != "" {
			for _, c := range concepts[prev+" "+raw] {
				tf[c] += w
			}
		}
		prev = raw
		if !ok {
			return
		}
		tf[s] += w
		n += w
		for _, c := range concepts[s] {
			tf[c] += w
		}
	})
	return n
}

// queryTerm is a term of a query and its weight.
type queryTerm struct {
	term string
	w    float32
}

// maxQueryTerms bounds the terms of one query.
const maxQueryTerms = 64

// queryTerms returns the terms of a query: each distinct word's stem,
// then the concepts of its words, at most maxQueryTerms.
func queryTerms(query string) []queryTerm {
	if len(query) > maxDocText {
		query = query[:maxDocText]
	}
	var words, cs []queryTerm
	seen := map[string]bool{}
	addConcepts := func(key string) {
		for _, c := range concepts[key] {
			if !seen[c] {
				seen[c] = true
				cs = append(cs, queryTerm{c, conceptWeight})
			}
		}
	}
	prev := ""
	splitWords(query, func(word string) {
		s, ok, raw := indexWord(word)
		if prev != "" {
			addConcepts(prev + " " + raw)
		}
		prev = raw
		if !ok {
			return
		}
		if !seen[s] {
			seen[s] = true
			words = append(words, queryTerm{s, 1})
		}
		addConcepts(s)
	})
	out := append(words, cs...)
	if len(out) > maxQueryTerms {
		out = out[:maxQueryTerms]
	}
	return out
}

// indexWord turns a word of text into an index term: lower-cased and
// stemmed. Stop words and single characters are not terms (ok is false),
// but still part of phrases: raw is the word's stem, whatever it is.
func indexWord(word string) (term string, ok bool, raw string) {
	w := strings.ToLower(word)
	raw = stems.get(w)
	if len(w) < 2 || searchStopWords[w] {
		return "", false, raw
	}
	return raw, true, raw
}

// searchStopWords are words too common in requests and descriptions to
// rank tools by.
var searchStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true,
	"to": true, "in": true, "on": true, "for": true, "with": true, "by": true,
	"is": true, "are": true, "be": true, "it": true, "this": true, "that": true,
	"as": true, "at": true, "from": true, "me": true, "my": true, "i": true,
	"you": true, "your": true, "please": true, "can": true, "could": true,
	"would": true, "will": true, "do": true, "does": true, "what": true,
	"how": true, "which": true, "who": true, "when": true, "where": true,
	"why": true, "there": true, "these": true, "those": true, "them": true,
	"their": true, "our": true, "we": true, "us": true, "some": true,
	"any": true, "into": true, "onto": true, "about": true, "have": true,
	"has": true, "had": true, "was": true, "were": true, "been": true,
	"did": true, "just": true, "now": true, "here": true, "its": true,
	"let": true, "want": true, "need": true, "like": true, "if": true,
	"use": true, "using": true, "used": true, "should": true, "must": true,
	"not": true, "no": true, "than": true, "then": true, "so": true,
	"also": true, "only": true, "such": true, "may": true, "eg": true, "etc": true, "via": true, "one": true, "each": true, "between": true,
}

// splitWords calls emit with each word of text: runs of letters and
// digits, split again at camelCase boundaries ("getHTTPStatus" is get,
// HTTP, Status). Bytes that are not UTF-8 separate words.
func splitWords(text string, emit func(string)) {
	start := -1
	var prev rune
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isAlnumRune(r) {
			if start >= 0 {
				emit(text[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		} else if isUpperRune(r) {
			// camelCase: aB splits before B; ABc splits before B; a1 does not.
			split := isLowerRune(prev) || isDigitRune(prev)
			if !split && isUpperRune(prev) {
				next, _ := utf8.DecodeRuneInString(text[i+size:])
				split = isLowerRune(next)
			}
			if split {
				emit(text[start:i])
				start = i
			}
		}
		prev = r
		i += size
	}
	if start >= 0 {
		emit(text[start:])
	}
}

// splitDescription returns the head of a description, its first
// descHeadWords words, and the rest.
func splitDescription(s string) (head, tail string) {
	words := 0
	in := false
	for i, r := range s {
		a := isAlnumRune(r)
		if a && !in {
			words++
			if words > descHeadWords {
				return s[:i], s[i:]
			}
		}
		in = a
	}
	return s, ""
}

// nameStems returns the distinct stems of the words of a name.
func nameStems(name string) []string {
	var out []string
	splitWords(name, func(word string) {
		if s, ok, _ := indexWord(word); ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	})
	return out
}

// stemCache remembers the stems of the words seen, up to maxStems of them
// (then it starts again): a catalogue's vocabulary is small and stemming
// is most of the cost of indexing a tool.
type stemCache struct {
	mu sync.RWMutex
	m  map[string]string
}

const maxStems = 1 << 16

var stems stemCache

func (c *stemCache) get(w string) string {
	c.mu.RLock()
	s, ok := c.m[w]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = stem(w)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxStems {
		c.m = make(map[string]string, 1024)
	}
	c.m[strings.Clone(w)] = s
	c.mu.Unlock()
	return s
}
