//go:build unix

package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestGatewayOpenAPIToolSearch serves GitHub's REST API description
// (1,223 operations) through tool search: a client finds an operation by
// what it does and calls it through call_tool; the request reaches the
// API (a local recorder, as base_url) with the header the entry sets from
// the environment.
func TestGatewayOpenAPIToolSearch(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open("../../openapi/testdata/github-rest.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "github.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()

	var mu sync.Mutex
	var got []*http.Request
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"number":1,"title":"first"}]`)
	}))
	defer api.Close()
	t.Setenv("GH_TEST_TOKEN", "gh-secret")
	g := startGateway(t, writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
qualified_names: true
tool_search: {}
openapi:
  - name: github
    document: github.json
    base_url: %s
    headers:
      Authorization: "Bearer ${GH_TEST_TOKEN}"
`, api.URL)))
	added := g.waitLog(t, 0, func(r map[string]any) bool { return r["msg"] == "openapi added" })
	ready := g.waitLog(t, 0, upstreamReady("github"))
	t.Logf("the document loaded in %s", logTime(t, ready).Sub(logTime(t, added)))
	cs := connectGateway(t, g)
	if got, want := toolNames(t, cs), []string{"call_tool", "describe_tools", "search_tools"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	var found struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	callJSON(t, cs, "search_tools", map[string]any{"query": "list repository issues", "limit": 10}, &found)
	if !slices.ContainsFunc(found.Tools, func(x struct{ Name string }) bool { return x.Name == "github_issues_list-for-repo" }) {
		t.Fatalf("search = %+v", found)
	}
	text, isErr := toolText(t, cs, "call_tool", map[string]any{"name": "github_issues_list-for-repo", "arguments": map[string]any{"owner": "o", "repo": "r", "state": "open"}})
	if isErr {
		t.Fatalf("call_tool: %s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].URL.Path != "/repos/o/r/issues" || got[0].URL.Query().Get("state") != "open" || got[0].Header.Get("Authorization") != "Bearer gh-secret" {
		t.Errorf("the API received %d requests: %+v", len(got), got)
	}
}

// logTime returns the time of a log record.
func logTime(t *testing.T, r map[string]any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r["time"]))
	if err != nil {
		t.Fatal(err)
	}
	return at
}
