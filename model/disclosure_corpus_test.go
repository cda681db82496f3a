package model

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// corpusTool is a tool definition of testdata/disclosure/tools.json.
type corpusTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// loadCorpus returns the tools of the corpus as toolkit items, each in
// its server's namespace.
func loadCorpus(t testing.TB) []toolkit.Item {
	t.Helper()
	data, err := os.ReadFile("testdata/disclosure/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Servers []struct {
			Namespace string       `json:"namespace"`
			Tools     []corpusTool `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	var items []toolkit.Item
	for _, s := range c.Servers {
		for _, ct := range s.Tools {
			schema := new(jsonschema.Schema)
			if err := json.Unmarshal(ct.InputSchema, schema); err != nil {
				t.Fatalf("%s.%s: %v", s.Namespace, ct.Name, err)
			}
			items = append(items, toolkit.Item{Namespace: s.Namespace, Type: toolkit.ListTypeTools, Name: ct.Name,
				Value: &testTool{name: ct.Name, desc: ct.Description, schema: schema, meta: tool.Meta{Title: ct.Title}}})
		}
	}
	return items
}

// corpusTask is a task of testdata/disclosure/tasks.json: a request and
// the tools (namespace.name) that serve it.
type corpusTask struct {
	Task  string   `json:"task"`
	Tools []string `json:"tools"`
}

func loadTasks(t testing.TB) []corpusTask {
	t.Helper()
	data, err := os.ReadFile("testdata/disclosure/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tasks []corpusTask `json:"tasks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Tasks
}

// finding is how well a search finds the tools of a set of tasks.
type finding struct {
	tasks    int
	at1, at5 int     // tasks with one of their tools first, in the first five
	rr       float64 // summed reciprocal ranks (a miss of the first 10 adds 0)
	misses   []string
}

func (f finding) String() string {
	n := float64(max(f.tasks, 1))
	return fmt.Sprintf("%3d tasks: recall@1 %.3f  recall@5 %.3f  MRR %.3f", f.tasks, float64(f.at1)/n, float64(f.at5)/n, f.rr/n)
}

// evaluate runs each task through search (the first 10 keys, best
// first) and scores where the first of its tools comes.
func evaluate(tasks []corpusTask, search func(query string, k int) []string) finding {
	var f finding
	for _, tk := range tasks {
		f.tasks++
		got := search(tk.Task, 10)
		rank := 0
		for i, key := range got {
			for _, want := range tk.Tools {
				if key == want && rank == 0 {
					rank = i + 1
				}
			}
		}
		if rank == 1 {
			f.at1++
		}
		if rank >= 1 && rank <= 5 {
			f.at5++
		} else {
			top := got[:min(3, len(got))]
			f.misses = append(f.misses, fmt.Sprintf("%q wants %s; rank %d; first: %s", tk.Task, strings.Join(tk.Tools, " "), rank, strings.Join(top, " ")))
		}
		if rank > 0 {
			f.rr += 1 / float64(rank)
		}
	}
	return f
}
