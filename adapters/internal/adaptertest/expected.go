package adaptertest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/tool"
)

// TripIn is the input of the plan_trip tool: optional, nested, array, map
// and enum-like fields, so that its schema needs every adaptation.
type TripIn struct {
	Destination string             `json:"destination" jsonschema:"where to go"`
	Nights      *int               `json:"nights,omitempty" jsonschema:"how many nights"`
	Tags        []string           `json:"tags,omitempty"`
	Budget      map[string]float64 `json:"budget,omitempty" jsonschema:"per category"`
	Legs        []Leg              `json:"legs"`
	Return      *Leg               `json:"return,omitempty"`
}

// Leg is one leg of a trip.
type Leg struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Trip returns the plan_trip tool.
func Trip() toolkit.Tool {
	return tool.Must("plan_trip", "Plans a trip.", func(_ context.Context, in TripIn) (string, error) {
		return "planned " + in.Destination, nil
	})
}

// Expected returns, by model name, the tool objects model.EncodeTool
// writes in format f for the tools of tk (decoded): what an adapter's SDK
// must send. The names are those of a fresh catalog (made with opts),
// which are the same as any other catalog's for the same builtins.
func Expected(t testing.TB, tk model.Lister, f model.Format, opts ...model.CatalogOption) map[string]any {
	t.Helper()
	defs, err := model.NewCatalog(tk, opts...).Definitions(context.Background(), model.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, d := range defs {
		b, err := model.EncodeTool(f, d)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out[d.Name] = v
	}
	return out
}

// CheckSent checks that the tool objects an SDK sent (sent, decoded from
// the request) are exactly what model.EncodeTool writes in format f for
// the tools of tk (see Expected, which opts configure), one each; name
// returns a sent object's model name.
func CheckSent(t testing.TB, tk model.Lister, f model.Format, sent []any, name func(any) string, opts ...model.CatalogOption) {
	t.Helper()
	want := Expected(t, tk, f, opts...)
	if len(sent) != len(want) {
		t.Fatalf("%s: %d tools sent, want %d", f, len(sent), len(want))
	}
	for _, got := range sent {
		if w := want[name(got)]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s: tool sent\n%s\nwant\n%s", f, JSON(got), JSON(w))
		}
	}
}

// Name returns the "name" member of a tool object, for CheckSent.
func Name(tool any) string { return Str(tool, "name") }

// Untyped returns the set_level tool, whose schema says the type of most
// of its properties only through their values or keywords (an enum of
// numbers, a const, an unconstrained value, a bare minimum, an array
// without items), as remote servers' schemas often do: Gemini needs a type
// on each.
func Untyped() toolkit.Tool {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"level":{"enum":[1,2,3],"description":"How loud"},
		"ratio":{"enum":[0.5,1]},
		"flag":{"const":true},
		"mode":{"enum":["auto",0,null]},
		"anything":{},
		"width":{"description":"Width in pixels","minimum":0},
		"labels":{"type":"array"}
	},"required":["level"]}`), &s); err != nil {
		panic(err)
	}
	return &schemaTool{name: "set_level", desc: "Sets a level.", schema: &s}
}

// schemaTool is a tool with a given input schema that echoes its input.
type schemaTool struct {
	tool.Base
	name, desc string
	schema     *jsonschema.Schema
}

// Name returns the tool's name.
func (s *schemaTool) Name() string { return s.name }

// Description returns the tool's description.
func (s *schemaTool) Description() string { return s.desc }

// InputSchema returns the schema the tool was made with.
func (s *schemaTool) InputSchema() (*jsonschema.Schema, error) { return s.schema, nil }

// Run returns the input.
func (s *schemaTool) Run(_ context.Context, in json.RawMessage) (any, error) { return in, nil }
