package mcp

import (
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewTaskServerForTest returns the server of the task support tests, for
// the tests of package mcp_test.
func NewTaskServerForTest(support map[string]string) (*sdk.Server, func(tool string) int) {
	s := newTaskServer(support)
	return s.Server, s.called
}

// TaskSupportOfTools is what the tools of NewTaskServerForTest declare.
var TaskSupportOfTools = taskSupportOfTools

// ConnectorOfForTest returns the connector of a remote tool.
func ConnectorOfForTest(v any) (*Connector, bool) {
	t, ok := v.(*remoteTool)
	if !ok {
		return nil, false
	}
	return t.c, true
}

// OptUserWaitingForTest calls f each time a call starts waiting for its
// user's authorization (OptOAuthPerUser).
func OptUserWaitingForTest(f func()) Option {
	return func(o *options) error {
		o.hooks.userWaiting = f
		return nil
	}
}

// OptRedirectTakenForTest calls f when a user's authorization has its
// redirect, before the user is no longer asked to open its URL.
func OptRedirectTakenForTest(f func()) Option {
	return func(o *options) error {
		o.hooks.redirectTaken = f
		return nil
	}
}

// OptUserSessionIdleForTest sets how long the upstream session of a
// user's calls without a client session outlives the last one, and calls
// closed each time a client's upstream session closes.
func OptUserSessionIdleForTest(d time.Duration, closed func()) Option {
	return func(o *options) error {
		o.hooks.userIdle, o.hooks.clientClosed = d, closed
		return nil
	}
}
