package search

import (
	"context"
	"reflect"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// indexItems are the items the Index tests search: tools of three
// namespaces and one resource.
func indexItems() []toolkit.Item {
	mk := func(ns, name, desc string) toolkit.Item {
		run := func(context.Context, struct{}) (string, error) { return "", nil }
		return toolkit.Item{Namespace: ns, Type: toolkit.ListTypeTools, Name: name, Value: tool.Must(name, desc, run)}
	}
	return []toolkit.Item{
		mk("builtin", "get_weather", "Current weather conditions for a city."),
		mk("builtin", "get_time", "Current time in a time zone."),
		mk("github", "create_issue", "Open a new issue in a repository."),
		mk("github", "list_issues", "List issues of a repository, filtered by state."),
		mk("github", "searchCode", "Search code across repositories."),
		mk("files", "read_file", "Read a file from disk."),
		mk("files", "delete_file", "Delete a file from disk."),
		{Namespace: "files", Type: toolkit.ListTypeResources, Name: "motd", URI: "file:///etc/motd"},
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"get_weather":                   {"get", "weather"},
		"getWeatherForecast":            {"get", "weather", "forecast"},
		"parseHTTPResponse":             {"parse", "http", "response"},
		"list-repos.v2":                 {"list", "repo", "v2"},
		"What is the weather in Paris?": {"weather", "pari"},
		"addresses class":               {"addresse", "class"},
		"ÉtéCafé naïve":                 {"été", "café", "naïve"},
		"":                              nil,
	} {
		if got := Words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIndexSearch(t *testing.T) {
	x := NewIndex(indexItems())
	names := func(hits []Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.Item.Name)
		}
		return out
	}
	cases := []struct {
		query string
		k     int
		keep  func(toolkit.Item) bool
		want  []string
	}{
		{"what's the weather like in Paris?", 3, nil, []string{"get_weather"}},
		{"open a GitHub issue about the bug", 2, nil, []string{"create_issue", "list_issues"}},
		{"search code", 5, nil, []string{"searchCode"}},
		{"file", 10, nil, []string{"read_file", "delete_file"}},
		{"file", 1, nil, []string{"read_file"}},
		{"file", 10, func(it toolkit.Item) bool { return it.Name != "read_file" }, []string{"delete_file"}},
		{"motd", 10, nil, nil},
		{"the and of", 10, nil, nil},
		{"", 10, nil, nil},
		{"weather", 0, nil, nil},
	}
	for _, c := range cases {
		got := names(x.Search(c.query, c.k, c.keep))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Search(%q, %d) = %v, want %v", c.query, c.k, got, c.want)
		}
	}
	// Scores are positive and descending; positions point back.
	items := indexItems()
	hits := x.Search("issue repository", 10, nil)
	for i, h := range hits {
		if h.Score <= 0 || i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("bad order: %v", hits)
		}
		if items[h.Pos].Name != h.Item.Name {
			t.Errorf("Pos %d is %s, not %s", h.Pos, items[h.Pos].Name, h.Item.Name)
		}
	}
	if NewIndex(nil).Search("x", 3, nil) != nil {
		t.Error("empty index found something")
	}
}

func TestIndexConcurrent(t *testing.T) {
	x := NewIndex(indexItems())
	done := make(chan []Hit)
	for range 8 {
		go func() { done <- x.Search("file issue weather", 3, nil) }()
	}
	first := <-done
	for range 7 {
		if got := <-done; !reflect.DeepEqual(got, first) {
			t.Errorf("concurrent searches disagree: %v vs %v", got, first)
		}
	}
}
