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
// when the real script comes, which starts in a fresh VM of its own. The
// collector then takes back what it made, so that the heap bound counts
// only the script's.
func warmUp() {
	lim, err := Limits{}.withDefaults()
	if err != nil {
		return
	}
	_, _ = runScript(context.Background(), warmUpScript, lim, warmCaller{})
	runtime.GC()
}

// warmCaller answers warmUpScript's call without a parent.
type warmCaller struct{}

func (warmCaller) start(_ context.Context, id int, _ string, _ []byte, done chan<- callResult) {
	done <- callResult{id: id, out: callOut{JSON: []byte(`{"a":1}`)}}
}
