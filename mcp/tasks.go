package mcp

import (
	"bytes"
	"context"
	"encoding/json"
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
// The go-sdk has no task API and its Tool type drops the field, so the
// connector reads it from the raw tools/list answers: each listing carries
// a taskSlot in its context; the connection (stdio, SSE, OptDialer
// transports) or the HTTP response body (streamable HTTP) that carries the
// answer fills the slot before the SDK decodes the answer. Answers are
// decoded a second time only when their bytes contain "taskSupport".

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

// taskSupportKey is what a tools/list answer contains when some tool
// declares its task support.
var taskSupportKey = []byte(`"taskSupport"`)

// taskSlot receives the task support of the tools of one tools/list page,
// and the page's raw answer (lenient_list.go).
type taskSlot struct {
	mu     sync.Mutex
	tools  map[string]TaskSupport // tools whose support is not forbidden
	result []byte                 // the answer's result, when known alone
	msg    []byte                 // the whole answer (HTTP), when result is not known
	done   atomic.Bool            // the listing returned: nothing more comes
}

type taskSlotKey struct{}

func withTaskSlot(ctx context.Context, s *taskSlot) context.Context {
	return context.WithValue(ctx, taskSlotKey{}, s)
}

func taskSlotFrom(ctx context.Context) *taskSlot {
	s, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	return s
}

// get returns the task support of the named tool.
func (s *taskSlot) get(name string) TaskSupport {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tools[name]; ok {
		return t
	}
	return TaskForbidden
}

// finish records that the listing returned.
func (s *taskSlot) finish() { s.done.Store(true) }

// observeResult reads the result of a tools/list answer, which it keeps
// (the caller does not change it).
func (s *taskSlot) observeResult(result []byte) {
	m := parseTaskSupport(result)
	s.mu.Lock()
	if !s.done.Load() {
		s.result, s.msg = result, nil
		if m != nil {
			s.tools = m
		}
	}
	s.mu.Unlock()
}

// observeMessage reads a JSON-RPC message that may be the tools/list answer
// (one event of a streamable HTTP response, whose buffer is reused), and
// keeps a copy of an answer.
func (s *taskSlot) observeMessage(msg []byte) { s.observeAnswer(msg, false) }

// observeAnswer is observeMessage for a message that is the slot's to keep
// when owned (a whole response body), a copy otherwise.
func (s *taskSlot) observeAnswer(msg []byte, owned bool) {
	if bytes.Contains(msg, resultKey) {
		kept := msg
		if !owned {
			kept = bytes.Clone(msg)
		}
		s.mu.Lock()
		if !s.done.Load() {
			s.msg, s.result = kept, nil
		}
		s.mu.Unlock()
	}
	if !bytes.Contains(msg, taskSupportKey) {
		return
	}
	var r struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &r) != nil || len(r.ID) == 0 || len(r.Result) == 0 {
		return
	}
	if m := parseTaskSupport(r.Result); m != nil {
		s.mu.Lock()
		if !s.done.Load() {
			s.tools = m
		}
		s.mu.Unlock()
	}
}

// resultKey is what an answer (not a request or notification) contains.
var resultKey = []byte(`"result"`)

// parseTaskSupport returns the tools of a tools/list result whose task
// support is optional or required, or nil when there is none (or the
// result does not parse: the SDK reports that). Unknown values count as
// forbidden.
func parseTaskSupport(result []byte) map[string]TaskSupport {
	if !bytes.Contains(result, taskSupportKey) {
		return nil
	}
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	var m map[string]TaskSupport
	for _, t := range r.Tools {
		if t.Execution == nil {
			continue
		}
		switch ts := TaskSupport(t.Execution.TaskSupport); ts {
		case TaskOptional, TaskRequired:
			if m == nil {
				m = map[string]TaskSupport{}
			}
			m[t.Name] = ts
		}
	}
	return m
}

// maxPendingLists bounds the tools/list requests a taskConn remembers
// while it waits for their answers.
const maxPendingLists = 64

// taskConn is a connection that reads the task support of tools from the
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

// Read fills the taskSlot of a tools/list answer before handing it on.
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
			s.observeResult(resp.Result)
		}
	}
	return msg, err
}

// jsonTap keeps a JSON response body (up to limit bytes) and hands it to
// its taskSlot at the end.
type jsonTap struct {
	slot  *taskSlot
	limit int
	buf   []byte
	over  bool
}

func (t *jsonTap) feed(p []byte) {
	if t.over {
		return
	}
	if len(t.buf)+len(p) > t.limit {
		t.over, t.buf = true, nil
		return
	}
	t.buf = append(t.buf, p...)
}

func (t *jsonTap) end() {
	if !t.over && t.buf != nil {
		t.slot.observeAnswer(t.buf, true)
	}
	t.buf, t.over = nil, true
}
