package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

// TestAuditTiesNestedCalls: a tool that calls two others with the ctx it
// was given writes three records; the inner ones name the outer call's
// number as their parent, and every number is its own.
func TestAuditTiesNestedCalls(t *testing.T) {
	var buf bytes.Buffer
	tk, err := New(WithAudit(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	inner := &testTool{name: "inner", run: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	outer := &testTool{name: "outer", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		for range 2 {
			if _, err := tk.Call(ctx, "inner"); err != nil {
				return nil, err
			}
		}
		if _, err := tk.Call(ctx, "nothing"); err == nil {
			t.Error("a call of nothing ran")
		}
		return "done", nil
	}}
	if err := tk.AddTool(inner, outer); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Call(context.Background(), "outer"); err != nil {
		t.Fatal(err)
	}
	recs := auditRecords(t, &buf)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4: %v", len(recs), recs)
	}
	last := recs[3] // the outer call ends last
	if last["tool"] != "outer" || last["call"] == nil || last["parent"] != nil {
		t.Fatalf("outer record %v", last)
	}
	seen := map[any]bool{last["call"]: true}
	for _, r := range recs[:3] {
		if r["parent"] != last["call"] {
			t.Errorf("record %v: parent %v, want %v", r, r["parent"], last["call"])
		}
		if r["tool"] == "inner" {
			if r["call"] == nil || seen[r["call"]] {
				t.Errorf("record %v: call number missing or not its own", r)
			}
			seen[r["call"]] = true
		}
	}
}
