package codemode

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain makes the test binary a code-mode worker (or a hostile one,
// see serveHostileWorker and serveHostile) when it was started as one, and checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	serveHostileWorker()
	serveHostile()
	ServeWorker()
	goleak.VerifyTestMain(m)
	os.Exit(0)
}
