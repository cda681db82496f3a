package search

import (
	"strings"
	"sync"
	"unicode"

	toolkit "github.com/llmkit/toolkit"
)

// Index is a keyword index (Okapi BM25) over toolkit items. It is
// immutable once built and safe for concurrent use; build it once per set
// of items and query it many times. [ToolIndex] is the same ranking over
// documents that come and go one by one.
//
// An item is indexed by the words of its name, namespace, title,
// description and input parameters (names and descriptions), each part
// weighted (a word of the name counts three times a word of the
// description; a parameter's description a quarter). Text is split into
// words on anything that is not a letter or digit and on camelCase
// boundaries ("getHTTPStatus" is get, http, status), lower-cased, freed of
// common English stop words and reduced to its stem (Porter's algorithm:
// "deleting" and "deleted" are "delet"). A word also stands for the
// concepts it belongs to in a small table of synonyms a user would expect
// (remove and delete, fetch and get, folder and directory, ...): a query
// word matches a tool that says the same thing another way, at half the
// weight of the word itself.
type Index struct {
	items   []toolkit.Item
	pos     []int // by document id: the item's position in items
	eng     *engine
	scratch sync.Pool // *searchScratch
}

// Hit is one search result.
type Hit struct {
	// Item is the matching item.
	Item toolkit.Item
	// Pos is its position in the slice given to NewIndex.
	Pos int
	// Score is its BM25 score (higher is better).
	Score float64
}

// NewIndex indexes the tools and prompts of items (resources are skipped
// but keep their positions).
func NewIndex(items []toolkit.Item) *Index {
	x := &Index{items: items, eng: newEngine()}
	tf := map[string]float32{}
	for i, it := range items {
		if it.Type == toolkit.ListTypeResources {
			continue
		}
		clear(tf)
		d := DocOf("", it)
		n := docTerms(d, tf)
		x.eng.add(tf, n, nameStems(d.Name))
		x.pos = append(x.pos, i)
	}
	x.scratch.New = func() any { return new(searchScratch) }
	return x
}

// Len returns the number of items indexed (resources included).
func (x *Index) Len() int { return len(x.items) }

// Search returns up to k items that best match query, best first (ties in
// index order), keeping only items for which keep returns true (nil keeps
// all). Items that share no word or concept with the query are never
// returned.
func (x *Index) Search(query string, k int, keep func(toolkit.Item) bool) []Hit {
	if k <= 0 || len(x.pos) == 0 {
		return nil
	}
	q := queryTerms(query)
	if len(q) == 0 {
		return nil
	}
	var keepDoc func(int32) bool
	if keep != nil {
		keepDoc = func(d int32) bool { return keep(x.items[x.pos[d]]) }
	}
	sc := x.scratch.Get().(*searchScratch)
	found := x.eng.search(q, k, keepDoc, sc)
	x.scratch.Put(sc)
	out := make([]Hit, len(found))
	for i, s := range found {
		p := x.pos[s.doc]
		out[i] = Hit{Item: x.items[p], Pos: p, Score: s.score}
	}
	return out
}

// stopWords are the words Words leaves out.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true,
	"to": true, "in": true, "on": true, "for": true, "with": true, "by": true,
	"is": true, "are": true, "be": true, "it": true, "this": true, "that": true,
	"as": true, "at": true, "from": true, "me": true, "my": true, "i": true,
	"you": true, "your": true, "please": true, "can": true, "could": true,
	"would": true, "will": true, "do": true, "does": true, "what": true,
}

// Words splits text into plain words: runs of letters and digits, split
// again at camelCase boundaries, lower-cased, without stop words, with a
// plural "s" removed from words longer than three letters (not "ss"). It
// is the light analysis of a text; the index stems its words further (see
// Index).
func Words(text string) []string {
	var out []string
	splitWords(text, func(w string) {
		w = strings.ToLower(w)
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if w != "" && !stopWords[w] {
			out = append(out, w)
		}
	})
	return out
}

func isUpperRune(r rune) bool { return unicode.IsUpper(r) }
func isLowerRune(r rune) bool { return unicode.IsLower(r) }
func isDigitRune(r rune) bool { return unicode.IsDigit(r) }
func isAlnumRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
