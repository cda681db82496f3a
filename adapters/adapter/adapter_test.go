package adapter_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/model"
)

// NewConfig applies the options in order: a later option of the same kind
// wins, WithDispatch and WithDisclosure options add up, and a nil option
// is skipped.
func TestNewConfig(t *testing.T) {
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	cat := model.NewCatalog(tk)
	var seen []string
	c := adapter.NewConfig(
		adapter.WithFilter(model.Filter{Names: []string{"a_*"}}),
		nil,
		adapter.WithFilter(model.Filter{ReadOnly: true}),
		adapter.WithCatalog(cat),
		adapter.WithDispatch(model.WithTimeout(time.Second)),
		adapter.WithDispatch(model.WithRepair(true), model.WithConcurrency(2)),
		adapter.WithOnResult(func(_ context.Context, r model.Result) { seen = append(seen, r.Name) }),
		adapter.WithDisclosure(model.WithAlways(model.Filter{Names: []string{"a_b"}})),
		adapter.WithDisclosure(model.WithSearchLimit(3), model.WithMaxLoaded(8)),
	)
	if !reflect.DeepEqual(c.Filter, model.Filter{ReadOnly: true}) {
		t.Errorf("Filter = %+v, want the last one given", c.Filter)
	}
	if c.Catalog != cat {
		t.Error("Catalog is not the one given")
	}
	if len(c.Dispatch) != 3 {
		t.Errorf("Dispatch holds %d options, want the 3 given", len(c.Dispatch))
	}
	if c.OnResult == nil {
		t.Fatal("OnResult not set")
	}
	c.OnResult(context.Background(), model.Result{Name: "x"})
	if !reflect.DeepEqual(seen, []string{"x"}) {
		t.Errorf("OnResult saw %v", seen)
	}
	if len(c.Disclosure) != 3 {
		t.Errorf("Disclosure holds %d options, want the 3 given", len(c.Disclosure))
	}
	if c.Multimodal || c.ToolReferences {
		t.Error("Multimodal set without an option setting it")
	}
	if z := adapter.NewConfig(); !reflect.DeepEqual(z, adapter.Config{}) {
		t.Errorf("NewConfig() = %+v, want the zero Config", z)
	}
}
