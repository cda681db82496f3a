package openapi_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
)

func TestPetstoreTools(t *testing.T) {
	for _, doc := range []string{"petstore-3.0.json", "petstore-3.1.json", "petstore-3.1.yaml"} {
		t.Run(doc, func(t *testing.T) {
			tools := mustTools(t, openapi.Config{Document: testdata(t, doc)})
			var names []string
			for n := range tools {
				names = append(names, n)
			}
			sort.Strings(names)
			want := []string{"addPet", "createUser", "createUsersWithArrayInput", "createUsersWithListInput", "deleteOrder",
				"deletePet", "deleteUser", "findPetsByStatus", "findPetsByTags", "getInventory", "getOrderById", "getPetById",
				"getUserByName", "loginUser", "logoutUser", "placeOrder", "updatePet", "updatePetWithForm", "updateUser", "uploadFile"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools:\n got %v\nwant %v", names, want)
			}
			get := tools["getPetById"]
			if m := get.Meta(); !m.ReadOnlyHint || m.DestructiveHint != nil || m.Title != "Find pet by ID" {
				t.Errorf("getPetById meta: %+v", m)
			}
			if m := tools["deletePet"].Meta(); m.ReadOnlyHint || m.DestructiveHint == nil || !*m.DestructiveHint {
				t.Errorf("deletePet meta: %+v", m)
			}
			if m := tools["updatePet"].Meta(); m.ReadOnlyHint || !m.IdempotentHint {
				t.Errorf("updatePet meta: %+v", m)
			}
			in := schemaJSON(t, get, false)
			props := in["properties"].(map[string]any)
			if _, ok := props["petId"]; !ok || !slices.Contains(in["required"].([]any), any("petId")) {
				t.Errorf("getPetById input: %v", in)
			}
			out := schemaJSON(t, get, true)
			if out == nil || out["type"] != "object" || out["properties"].(map[string]any)["name"] == nil {
				t.Errorf("getPetById output: %v", out)
			}
			add := schemaJSON(t, tools["addPet"], false)
			if b := add["properties"].(map[string]any)["body"]; b == nil || !slices.Contains(add["required"].([]any), any("body")) {
				t.Errorf("addPet input: %v", add)
			}
			if _, ok := add["$defs"].(map[string]any)["Pet"]; !ok {
				t.Errorf("addPet input has no $defs.Pet: %v", add)
			}
			if d := get.Description(); d == "" {
				t.Error("getPetById: no description")
			}
		})
	}
}

func TestSelection(t *testing.T) {
	doc := testdata(t, "petstore-3.0.json")
	for _, tc := range []struct {
		name             string
		include, exclude openapi.Selection
		want             []string
	}{
		{"tag", openapi.Selection{Tags: []string{"store"}}, openapi.Selection{}, []string{"deleteOrder", "getInventory", "getOrderById", "placeOrder"}},
		{"path glob", openapi.Selection{Paths: []string{"/pet/*"}}, openapi.Selection{}, []string{"deletePet", "findPetsByStatus", "findPetsByTags", "getPetById", "updatePetWithForm"}},
		{"path subtree", openapi.Selection{Paths: []string{"/store/**"}}, openapi.Selection{}, []string{"deleteOrder", "getInventory", "getOrderById", "placeOrder"}},
		{"operation and exclude", openapi.Selection{Operations: []string{"get*"}}, openapi.Selection{Tags: []string{"user"}}, []string{"getInventory", "getOrderById", "getPetById"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := mustTools(t, openapi.Config{Document: doc, Include: tc.include, Exclude: tc.exclude})
			var names []string
			for n := range tools {
				names = append(names, n)
			}
			sort.Strings(names)
			if !slices.Equal(names, tc.want) {
				t.Errorf("got %v, want %v", names, tc.want)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	long := "a" + string(make([]byte, 0)) + "very_long_operation_id_that_goes_on_and_on_and_on_past_sixty_four_characters_for_sure"
	for _, tc := range []struct{ id, method, path, want string }{
		{"getPetById", "GET", "/pet/{petId}", "getPetById"},
		{"repos/get", "GET", "/repos/{owner}/{repo}", "repos_get"},
		{"", "GET", "/pets/{petId}/photos", "get_pets_petId_photos"},
		{"", "DELETE", "/", "delete"},
		{"1st", "GET", "/", "op_1st"},
		{"über.cool", "GET", "/", "ber_cool"},
		{"", "GET", "/{a}..{b}", "get_a_b"},
	} {
		if got := openapi.ToolName(tc.id, tc.method, tc.path); got != tc.want {
			t.Errorf("ToolName(%q, %q, %q) = %q, want %q", tc.id, tc.method, tc.path, got, tc.want)
		}
	}
	a, b := openapi.ToolName(long, "GET", "/"), openapi.ToolName(long+"x", "GET", "/")
	if len(a) > 64 || len(b) > 64 || a == b || a != openapi.ToolName(long, "GET", "/") {
		t.Errorf("long names: %q %q", a, b)
	}
}

func TestNameCollisions(t *testing.T) {
	doc := writeDoc(t, `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /a:
    get: {operationId: "list.items", responses: {"200": {description: ok}}}
    post: {operationId: "list_items", responses: {"200": {description: ok}}}
  /b:
    get: {operationId: "list/items", responses: {"200": {description: ok}}}
`)
	tools := mustTools(t, openapi.Config{Document: doc})
	if len(tools) != 3 || tools["list_items"] == nil {
		t.Fatalf("tools: %v", keys(tools))
	}
	if tools["list_items"].Meta().ReadOnlyHint {
		t.Error("list_items is the POST, whose operationId it is")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestNotLoaded(t *testing.T) {
	c, err := openapi.New(openapi.Config{Document: "nope.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := c.ListTools(context.Background()); err != nil || len(tools) != 0 {
		t.Errorf("ListTools before load: %v, %v", tools, err)
	}
	if err := c.Reload(context.Background()); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("Reload of a missing file: %v", err)
	}
}
