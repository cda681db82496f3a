package codemode

import (
	"context"
	"runtime"
)

// warmUpScript exercises what most scripts use: a tool call awaited, JSON
// and the console.
const warmUpScript = `const r = await tools.warm({a: [1, "b"]}); console.log(JSON.stringify(r)); return {r, n: r.a + 1}`

// warmUp runs warmUpScript in a VM of its own, thrown away, before the
// worker says it is ready: the engine's code and tables are then loaded
// when the real script comes, which starts in a fresh VM of its own. A
// worker started ahead of its script (ahead) then touches its heap's
// first pages (touchHeap). The collector then takes back what it made,
// so that the heap bound counts only the script's.
func warmUp(ahead bool) {
	lim, err := Limits{}.withDefaults()
	if err != nil {
		return
	}
	_, _ = runScript(context.Background(), warmUpScript, lim, warmCaller{})
	if ahead {
		touchHeap(heapTouch)
	}
	runtime.GC()
}

// heapTouch is how much of the heap a worker started ahead touches: the
// collector's smallest heap goal, which a script's heap grows to before
// its first collection, and which the runtime then keeps (does not give
// back to the OS) from one collection to the next.
const heapTouch = 4 << 20

// touchHeap makes the heap grow by n bytes, each of its pages written
// once, and lets them go: the runtime keeps the pages, which the
// script's allocations then reuse. In a fresh process each page the heap
// grows into costs a page fault when first written, on a virtual machine
// about as much as a tool call's round trip to the parent: a script that
// makes calls one by one grows its heap by about one page a call. A
// worker started for a script that waits for it does not touch them:
// that costs more (tens of milliseconds) than most scripts' calls.
func touchHeap(n int) {
	const chunk, page = 64 << 10, 4 << 10
	held := make([][]byte, 0, n/chunk)
	for range n / chunk {
		b := make([]byte, chunk)
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		held = append(held, b)
	}
	runtime.KeepAlive(held)
}

// warmCaller answers warmUpScript's call without a parent.
type warmCaller struct{}

func (warmCaller) start(_ context.Context, id int, _ string, _ []byte, done chan<- callResult) {
	done <- callResult{id: id, out: callOut{JSON: []byte(`{"a":1}`)}}
}
