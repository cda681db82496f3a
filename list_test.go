package toolkit

import (
	"errors"
	"fmt"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func keys(resp *ListResponse) []string {
	out := make([]string, len(resp.Items))
	for i, it := range resp.Items {
		out[i] = string(it.Type) + ":" + it.Key()
	}
	return out
}

func TestListOrderAndFilters(t *testing.T) {
	tk, _ := fixture(t)
	ctx := t.Context()
	all, err := tk.List(ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tool:builtin.echo",
		"tool:one.builtin.echo", "tool:one.dotted.name", "tool:one.echo", "tool:one.only_one", "tool:one.shared",
		"tool:two.only_two", "tool:two.shared",
		"prompt:builtin.echo", "prompt:builtin.summarize",
		"prompt:one.shared",
		"prompt:user.echo", "prompt:user.mine",
		"resource:file:///builtin#builtin",
		"resource:file:///shared#one",
		"resource:file:///doc#part#two", "resource:file:///shared#two",
		"resource:file:///shared#user",
	}
	if got := keys(all); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}
	if all.Count != uint(len(want)) || len(all.Tools) != 8 || len(all.Prompts) != 5 || len(all.Resources) != 5 {
		t.Fatalf("count %d, tools %d, prompts %d, resources %d", all.Count, len(all.Tools), len(all.Prompts), len(all.Resources))
	}

	tests := []struct {
		req  ListRequest
		want []string
		n    uint
	}{
		{ListRequest{Type: ListTypeTools, Namespace: "two"}, []string{"tool:two.only_two", "tool:two.shared"}, 2},
		{ListRequest{Name: "shared"}, []string{"tool:one.shared", "tool:two.shared", "prompt:one.shared"}, 3},
		{ListRequest{Name: "shared_res"}, []string{"resource:file:///shared#one", "resource:file:///shared#two", "resource:file:///shared#user"}, 3},
		{ListRequest{Name: "file:///shared", Namespace: "user"}, []string{"resource:file:///shared#user"}, 1},
		{ListRequest{Type: ListTypePrompts, Namespace: "user"}, []string{"prompt:user.echo", "prompt:user.mine"}, 2},
		{ListRequest{Type: ListTypeTools, Namespace: "user"}, []string{}, 0},
		{ListRequest{Offset: 7, Limit: ptr(uint(3))}, []string{"tool:two.shared", "prompt:builtin.echo", "prompt:builtin.summarize"}, 18},
		{ListRequest{Offset: 17, Limit: ptr(uint(10))}, []string{"resource:file:///shared#user"}, 18},
		{ListRequest{Offset: 100}, []string{}, 18},
		{ListRequest{Limit: ptr(uint(0))}, []string{}, 18},
		{ListRequest{Type: ListTypeResources, Offset: 1, Limit: ptr(uint(2))}, []string{"resource:file:///shared#one", "resource:file:///doc#part#two"}, 5},
	}
	for _, tt := range tests {
		resp, err := tk.List(ctx, tt.req)
		if err != nil {
			t.Fatalf("%+v: %v", tt.req, err)
		}
		if got := keys(resp); fmt.Sprint(got) != fmt.Sprint(tt.want) || resp.Count != tt.n {
			t.Errorf("%+v:\n got %v (count %d)\nwant %v (count %d)", tt.req, got, resp.Count, tt.want, tt.n)
		}
		if resp.Offset != tt.req.Offset || resp.Limit != tt.req.Limit {
			t.Errorf("%+v: pagination echoed as %d/%v", tt.req, resp.Offset, resp.Limit)
		}
	}
}

func TestListErrors(t *testing.T) {
	tk, _ := fixture(t)
	if _, err := tk.List(t.Context(), ListRequest{Type: "tools"}); !errors.Is(err, ErrBadParameter) {
		t.Errorf("bad type: %v", err)
	}
	if _, err := tk.List(t.Context(), ListRequest{Namespace: "nowhere"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown namespace: %v", err)
	}
}

func TestListPagesCoverEverythingOnce(t *testing.T) {
	tk, _ := fixture(t)
	all, _ := tk.List(t.Context(), ListRequest{})
	var got []string
	for off := uint(0); off < all.Count; off += 4 {
		page, err := tk.List(t.Context(), ListRequest{Offset: off, Limit: ptr(uint(4))})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, keys(page)...)
	}
	if fmt.Sprint(got) != fmt.Sprint(keys(all)) {
		t.Fatalf("pages:\n%v\nall:\n%v", got, keys(all))
	}
}

// TestListHugeLimit checks pages whose Offset+Limit does not fit in a uint:
// the limit is then no limit, never an empty page.
func TestListHugeLimit(t *testing.T) {
	tk, _ := fixture(t)
	all, err := tk.List(t.Context(), ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := uint(len(all.Items))
	const huge = ^uint(0)
	tests := []struct {
		offset, limit uint
		want          uint // items in the page
	}{
		{0, huge, n},
		{1, huge, n - 1},
		{n - 1, huge, 1},
		{n, huge, 0},
		{huge, huge, 0},
		{2, huge - 1, n - 2},
		{1, 3, 3},
		{n - 2, 5, 2},
	}
	for _, tt := range tests {
		resp, err := tk.List(t.Context(), ListRequest{Offset: tt.offset, Limit: ptr(tt.limit)})
		if err != nil {
			t.Fatal(err)
		}
		if uint(len(resp.Items)) != tt.want || resp.Count != n {
			t.Errorf("Offset %d Limit %d: %d items (Count %d), want %d (Count %d)", tt.offset, tt.limit, len(resp.Items), resp.Count, tt.want, n)
			continue
		}
		if tt.want > 0 && resp.Items[0] != all.Items[min(tt.offset, n)] {
			t.Errorf("Offset %d Limit %d: page starts at %+v", tt.offset, tt.limit, resp.Items[0])
		}
	}
}

func TestItemDescription(t *testing.T) {
	for _, tc := range []struct {
		name string
		it   Item
		want string
	}{
		{"tool", Item{Value: newTool("t")}, "tool t"},
		{"prompt without description gives its title", Item{Value: &testPrompt{name: "p"}}, "Prompt p"},
		{"resource", Item{Value: &describedResource{testResource{name: "r"}, "the r"}}, "the r"},
		{"resource without description", Item{Value: &testResource{name: "r"}}, ""},
		{"no value", Item{}, ""},
	} {
		if got := tc.it.Description(); got != tc.want {
			t.Errorf("%s: Description() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

type describedResource struct {
	testResource
	desc string
}

func (r *describedResource) Description() string { return r.desc }
