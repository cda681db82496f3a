package mcpserver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them all,
// including the tests that do not check their own (leakCheck).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
