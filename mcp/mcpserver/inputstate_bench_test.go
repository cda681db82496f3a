package mcpserver

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkInputState measures sealing a requestState and opening it
// again (with the hash of a small request), as one round of input does.
func BenchmarkInputState(b *testing.B) {
	keys, err := newStateKeys(nil)
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"path":"/tmp/x","recursive":true,"limit":10}`)
	s := &inputState{round: 1, expires: time.Now().Add(time.Hour), principal: "alice", tool: "up_list_files",
		request: requestHash("up_list_files", args), target: "tools/call up.list_files"}
	b.ReportAllocs()
	for b.Loop() {
		opened, err := keys.open(keys.seal(s))
		if err != nil || opened.check(time.Now(), "alice", "up_list_files", requestHash("up_list_files", args)) != nil {
			b.Fatal("not opened")
		}
	}
}
