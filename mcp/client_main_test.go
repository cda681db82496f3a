package mcp

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestMain turns the test binary into a stdio MCP server when the stdio
// tests start it, and checks that no goroutine outlives the tests.
func TestMain(m *testing.M) {
	testserver.MaybeServeHostileStdio()
	testserver.MaybeServeStdio()
	goleak.VerifyTestMain(m, runtimeCleanups)
}
