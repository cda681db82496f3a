package mcp

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
)

// A server may declare, for each tool, whether it may or must be run as a
// task (MCP 2025-11-25: "execution": {"taskSupport": ...} in tools/list).
// The go-sdk has no task API and its Tool type drops the field; the
// connector decodes the tools of a listing itself (tools_page.go), and
// reads the field there. Each listing carries a taskSlot in its context:
// the connection (stdio, SSE, OptDialer transports) or the HTTP response
// body (streamable HTTP) that carries the answer fills the slot with the
// page's tools before the SDK decodes the rest of the answer.

// TaskSupport is how a tool of a remote server may be run as a task
// (task-augmented execution), as the server declares in its tool list.
type TaskSupport string

// The values of TaskSupport.
const (
	// TaskForbidden: the tool is called with an ordinary tools/call (the
	// default when the server says nothing).
	TaskForbidden TaskSupport = "forbidden"
	// TaskOptional: the tool may run as a task; the connector calls it
	// normally.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: the tool must run as a task. The connector does not
	// support task-augmented execution: the tool is listed, but calls to
	// it fail with [ErrTaskRequired] without reaching the server.
	TaskRequired TaskSupport = "required"
)

// ErrTaskRequired, message "not implemented: the tool requires
// task-augmented execution, which this client does not support", is wrapped
// by the error of a call to a tool whose server requires it to run as a
// task (TaskRequired), which the connector does not support. Such a call
// never reaches the server. Test with errors.Is; it also matches
// [toolkit.ErrNotImplemented].
var ErrTaskRequired = fmt.Errorf("%w: the tool requires task-augmented execution, which this client does not support", errs.ErrNotImplemented)

// TaskSupporter is implemented by the connector's tools: TaskSupport
// returns how the server lets the tool run as a task. Check for it with a
// type assertion on a tool from [toolkit.Toolkit.List] or
// [toolkit.Toolkit.Lookup].
type TaskSupporter interface {
	TaskSupport() TaskSupport
}

// taskRequiredNote is added to the description of a tool that requires
// task-augmented execution, so that a model or a user reading the list
// learns why calls to it fail.
const taskRequiredNote = "(This tool requires task-augmented execution, which this client does not support: calls to it fail.)"

// taskSlot receives the tools of one tools/list page (tools_page.go).
type taskSlot struct {
	mu    sync.Mutex
	tools []*listedTool // the page's tools, not decoded yet
	taken bool          // tools holds the page
	done  atomic.Bool   // the listing returned: nothing more comes
}

type taskSlotKey struct{}

func withTaskSlot(ctx context.Context, s *taskSlot) context.Context {
	return context.WithValue(ctx, taskSlotKey{}, s)
}

func taskSlotFrom(ctx context.Context) *taskSlot {
	s, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	return s
}

// page returns the tools of the page the slot took, and whether it took
// one.
func (s *taskSlot) page() ([]*listedTool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools, s.taken
}

// finish records that the listing returned.
func (s *taskSlot) finish() { s.done.Store(true) }

// maxPendingLists bounds the tools/list requests a taskConn remembers
// while it waits for their answers.
const maxPendingLists = 64

// taskConn is a connection that takes the pages of tools out of the
// answers to the tools/list requests sent with a taskSlot.
type taskConn struct {
	sdk.Connection
	waiting atomic.Int32 // len(pending): Read looks no further while it is 0
	mu      sync.Mutex
	pending map[jsonrpc.ID]*taskSlot
}

// watchTasks wraps c in a taskConn, except for the streamable HTTP client
// connection of the SDK: the SDK tells it of session changes through a
// method a wrapper would hide, and its answers are read from the HTTP
// bodies instead (roundTripper).
func watchTasks(c sdk.Connection) sdk.Connection {
	if isStreamableConn(c) {
		return c
	}
	return &taskConn{Connection: c}
}

// isStreamableConn reports whether c is the SDK's streamable HTTP client
// connection.
func isStreamableConn(c sdk.Connection) bool {
	t := reflect.TypeOf(c)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == reflect.TypeFor[sdk.StreamableClientTransport]().PkgPath() && t.Name() == "streamableClientConn"
}

// Write remembers the ID of a tools/list request sent with a taskSlot.
func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if s := taskSlotFrom(ctx); s != nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() && req.Method == "tools/list" {
			c.mu.Lock()
			if c.pending == nil {
				c.pending = map[jsonrpc.ID]*taskSlot{}
			}
			if len(c.pending) >= maxPendingLists {
				for id, p := range c.pending {
					if p.done.Load() {
						delete(c.pending, id)
					}
				}
			}
			if len(c.pending) < maxPendingLists {
				c.pending[req.ID] = s
			}
			c.waiting.Store(int32(len(c.pending)))
			c.mu.Unlock()
		}
	}
	return c.Connection.Write(ctx, msg)
}

// Read fills the taskSlot of a tools/list answer, and hands the answer on
// without its tools.
func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && c.waiting.Load() > 0 {
		c.mu.Lock()
		s := c.pending[resp.ID]
		if s != nil {
			delete(c.pending, resp.ID)
			c.waiting.Store(int32(len(c.pending)))
		}
		c.mu.Unlock()
		if s != nil && resp.Error == nil {
			resp.Result = s.take(resp.Result)
		}
	}
	return msg, err
}
