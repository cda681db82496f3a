package toolkit

import (
	"fmt"
	"runtime"
	"testing"
	"weak"
)

// adhocLen returns the number of entries of tk's cache of tools it does
// not hold.
func adhocLen(tk *Toolkit) int {
	tk.adhoc.mu.Lock()
	defer tk.adhoc.mu.Unlock()
	return len(tk.adhoc.cur) + len(tk.adhoc.old)
}

// TestAdhocSchemaCacheBounded calls thousands of tools the toolkit does not
// hold: the cache of their schemas stays bounded, keeps a tool in use, and
// lets go of tools no longer called.
func TestAdhocSchemaCacheBounded(t *testing.T) {
	tk := mustNew(t)
	ctx := t.Context()
	inUse := newTool("in_use")
	if _, err := tk.Call(ctx, inUse); err != nil {
		t.Fatal(err)
	}
	first := tk.schemasOf(inUse, nil)

	stale := weak.Make(newTool("stale"))
	if _, err := tk.Call(ctx, stale.Value()); err != nil {
		t.Fatal(err)
	}

	for i := range 3000 {
		if _, err := tk.Call(ctx, newTool(fmt.Sprintf("t%d", i))); err != nil {
			t.Fatal(err)
		}
		if n := adhocLen(tk); n > 2*adhocGen {
			t.Fatalf("after %d tools the cache holds %d entries, bound %d", i+1, n, 2*adhocGen)
		}
		if i%100 == 0 {
			if _, err := tk.Call(ctx, inUse); err != nil {
				t.Fatal(err)
			}
		}
	}
	if tk.schemasOf(inUse, nil) != first {
		t.Error("a tool called all along lost its cached schemas")
	}
	runtime.GC()
	if stale.Value() != nil {
		t.Error("a tool no longer called is still reachable from the cache")
	}
	runtime.KeepAlive(tk) // the cache, not the toolkit, must let go
}
