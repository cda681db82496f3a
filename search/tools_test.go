package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func keysOf(hits []ToolHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Key)
	}
	return out
}

func mustSearch(t *testing.T, x *ToolIndex, q string, k int, keep func(string) bool) []string {
	t.Helper()
	hits, err := x.Search(context.Background(), q, k, keep)
	if err != nil {
		t.Fatal(err)
	}
	return keysOf(hits)
}

func testDocs(items []testDoc) []Doc {
	var out []Doc
	for _, it := range items {
		out = append(out, Doc{Key: it.key, Name: it.name, Namespace: it.ns, Description: it.desc})
	}
	return out
}

// testDoc is a small tool description for the tests.
type testDoc struct{ key, ns, name, desc string }

var toolDocs = []testDoc{
	{"fs_delete_file", "fs", "delete_file", "Delete a file from disk."},
	{"fs_read_file", "fs", "read_file", "Read the complete contents of a file."},
	{"fs_create_directory", "fs", "create_directory", "Create a new directory."},
	{"gh_create_issue", "github", "create_issue", "Open a new issue in a repository."},
	{"gh_list_issues", "github", "list_issues", "List issues of a repository."},
	{"web_fetch", "web", "fetch", "Retrieve a web page as markdown."},
}

// TestToolIndexFinds: stems, synonyms, namespaces and parameters find
// the tool a request means.
func TestToolIndexFinds(t *testing.T) {
	x := NewToolIndex()
	if err := x.Put(context.Background(), testDocs(toolDocs)...); err != nil {
		t.Fatal(err)
	}
	x.Put(context.Background(), Doc{Key: "maps_elevation", Name: "maps_elevation", Description: "Get elevation data.",
		Params: []Param{{Name: "locations", Description: "Latitude and longitude pairs"}}})
	for q, want := range map[string]string{
		"remove the file old.txt":           "fs_delete_file", // synonym
		"deleting files":                    "fs_delete_file", // stems
		"make a new folder":                 "fs_create_directory",
		"open a ticket in the repo":         "gh_create_issue",
		"download the webpage":              "web_fetch", // fetch, retrieve ~ get; page
		"what issues does github have":      "gh_list_issues",
		"altitude at these GPS coordinates": "maps_elevation", // parameter description
	} {
		got := mustSearch(t, x, q, 3, nil)
		if len(got) == 0 || got[0] != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
	if got := mustSearch(t, x, "the and of", 5, nil); got != nil {
		t.Errorf("stop words found %v", got)
	}
	if got := mustSearch(t, x, "file", 5, func(k string) bool { return k != "fs_read_file" }); !reflect.DeepEqual(got, []string{"fs_delete_file"}) {
		t.Errorf("keep: %v", got)
	}
	if got := mustSearch(t, x, "file", 0, nil); got != nil {
		t.Errorf("k=0: %v", got)
	}
}

// TestToolIndexChanges: after any sequence of puts, replacements and
// deletions (compactions included) the index answers as one built from
// scratch with the same documents.
func TestToolIndexChanges(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	verbs := []string{"get", "list", "delete", "create", "search", "update"}
	nouns := []string{"file", "issue", "user", "page", "branch", "order"}
	doc := func(i int, gen int) Doc {
		v, n := verbs[(i+gen)%len(verbs)], nouns[(i/len(verbs)+gen)%len(nouns)]
		return Doc{Key: fmt.Sprintf("k%d", i), Name: v + "_" + n, Namespace: fmt.Sprintf("ns%d", i%7),
			Description: fmt.Sprintf("%s the %s number %d", v, n, i)}
	}
	live := map[string]Doc{}
	x := NewToolIndex()
	for step := range 3000 {
		i := rng.IntN(300)
		key := fmt.Sprintf("k%d", i)
		if _, ok := live[key]; ok && rng.IntN(3) > 0 {
			x.Delete(key)
			delete(live, key)
		} else {
			d := doc(i, step)
			x.Put(ctx, d)
			live[key] = d
		}
		if step%500 != 499 {
			continue
		}
		fresh := NewToolIndex()
		for _, d := range live {
			fresh.Put(ctx, d)
		}
		if x.Len() != len(live) || fresh.Len() != len(live) {
			t.Fatalf("Len %d, fresh %d, want %d", x.Len(), fresh.Len(), len(live))
		}
		for _, q := range []string{"delete the file", "list users", "order 42", "ns3 branch", "search page"} {
			got, _ := x.Search(ctx, q, 500, nil)
			want, _ := fresh.Search(ctx, q, 500, nil)
			if !sameHits(got, want) {
				t.Fatalf("step %d, %q: changed index %v, fresh %v", step, q, got[:min(5, len(got))], want[:min(5, len(want))])
			}
		}
	}
	if x.eng.dead > minCompaction && x.eng.dead > x.eng.live {
		t.Errorf("no compaction: %d dead, %d live", x.eng.dead, x.eng.live)
	}
	for key := range live {
		if !x.Has(key) {
			t.Errorf("%s lost", key)
		}
	}
	if x.Has("k-gone") {
		t.Error("Has of an unknown key")
	}
}

// sameHits compares hits by key and score (the order of equal scores
// depends on document ids, which differ between the two indexes).
func sameHits(a, b []ToolHit) bool {
	if len(a) != len(b) {
		return false
	}
	score := map[string]float64{}
	for _, h := range a {
		score[h.Key] = h.Score
	}
	for i, h := range b {
		s, ok := score[h.Key]
		if !ok || abs(s-h.Score) > 1e-3*max(1, abs(s)) || abs(a[i].Score-h.Score) > 1e-3*max(1, abs(s)) {
			return false
		}
	}
	return true
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestToolIndexConcurrent(t *testing.T) {
	ctx := context.Background()
	x := NewToolIndex()
	x.Put(ctx, testDocs(toolDocs)...)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("g%d_%d", g, i%20)
				x.Put(ctx, Doc{Key: key, Name: "delete_thing", Description: "Delete a thing."})
				if i%3 == 0 {
					x.Delete(key)
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				if got := mustSearch(t, x, "remove a file", 3, nil); len(got) == 0 {
					t.Error("nothing found")
					return
				}
			}
		})
	}
	wg.Wait()
}

// vowelEmbedder embeds a text as its counts of each vowel, plus one: a
// crude meaning that tests can predict.
type vowelEmbedder struct {
	err   error
	wrong bool // one vector too few
	calls int
	mu    sync.Mutex
}

func (e *vowelEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	var out [][]float32
	for _, t := range texts {
		v := make([]float32, 6)
		v[5] = 1
		for _, r := range strings.ToLower(t) {
			if i := strings.IndexRune("aeiou", r); i >= 0 {
				v[i]++
			}
		}
		out = append(out, v)
	}
	if e.wrong {
		out = out[1:]
	}
	return out, nil
}

// TestToolIndexEmbedder: with an embedder, a tool that shares no word
// with the query is found by meaning, and keyword hits still rank.
func TestToolIndexEmbedder(t *testing.T) {
	ctx := context.Background()
	e := &vowelEmbedder{}
	x := NewToolIndex(WithEmbedder(e))
	docs := []Doc{
		{Key: "aaa", Name: "aaa", Description: "aaaa aaaa"},
		{Key: "uuu", Name: "uuu", Description: "uuuu uuuu"},
		{Key: "delete_file", Name: "delete_file", Description: "Delete a file."},
	}
	if err := x.Put(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	got := mustSearch(t, x, "banana", 3, nil) // no word in common with any tool
	if len(got) == 0 || got[0] != "aaa" {
		t.Errorf("embedding did not find the closest: %v", got)
	}
	got = mustSearch(t, x, "remove file", 3, nil)
	if len(got) == 0 || got[0] != "delete_file" {
		t.Errorf("keyword and meaning together: %v", got)
	}
	got = mustSearch(t, x, "banana", 3, func(k string) bool { return k != "aaa" })
	if len(got) == 0 || got[0] == "aaa" {
		t.Errorf("keep ignored by the vector ranking: %v", got)
	}

	// A failing embedder: keyword hits, and the error.
	e.err = errors.New("model offline")
	hits, err := x.Search(ctx, "remove file", 3, nil)
	if err == nil || !strings.Contains(err.Error(), "model offline") || len(hits) == 0 || hits[0].Key != "delete_file" {
		t.Errorf("failing embedder: %v, %v", hits, err)
	}
	if err := x.Put(ctx, Doc{Key: "kw_only", Name: "kw_only", Description: "Keyword only."}); err == nil {
		t.Error("Put hid the embedder's error")
	}
	if !x.Has("kw_only") {
		t.Error("a document the embedder failed on was not indexed for keywords")
	}
	e.err, e.wrong = nil, true
	if err := x.Put(ctx, docs...); err == nil || !strings.Contains(err.Error(), "vectors for") {
		t.Errorf("a wrong number of vectors: %v", err)
	}
}

// FuzzSearchText: any text indexes and queries without a panic, with
// bounded terms, and finds itself.
func FuzzSearchText(f *testing.F) {
	for _, s := range []string{"getHTTPStatus", "ABCdef", "a1B2", "\xff\xfeA", "ÉtéCafé", "how many at once", strings.Repeat("x", 10000), "", "🙂🙂", "İstanbul"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := queryTerms(s)
		if len(q) > maxQueryTerms {
			t.Fatalf("%d query terms", len(q))
		}
		tf := map[string]float32{}
		docTerms(Doc{Name: s, Description: s}, tf)
		x := NewToolIndex()
		x.Put(context.Background(), Doc{Key: "k", Name: s, Description: s})
		hits, err := x.Search(context.Background(), s, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(q) > 0 && (len(hits) != 1 || hits[0].Key != "k") {
			t.Errorf("%q: a document does not find itself: %v (terms %v)", s, hits, q)
		}
	})
}
