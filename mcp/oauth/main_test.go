package oauth

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// waitLimit bounds the waits of the tests for what must happen.
const waitLimit = 20 * time.Second

// TestMain checks that no goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// leakCheck fails the test if goroutines it started outlive it. Call it
// first.
func leakCheck(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

func mustNotErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
