package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/llmkit/toolkit/internal/schemaguard"
)

// The go-sdk decodes a tools/list answer whole, every tool's schema into
// maps and jsonschema values, and checks each tool again with a fresh
// decoder: a page of 50,000 small tools (10 MB) made the process peak at
// over 30 times its size. So the connector takes the page out of the
// answer before the SDK sees it: the connection (stdio, legacy SSE,
// OptDialer transports) or the HTTP response (streamable HTTP, JSON or
// event stream) that carries the answer to a tools/list request sent with
// a taskSlot splits the page's tools array, one value at a time, into the
// slot, without decoding them, and hands the SDK a page with no tools and
// the same nextCursor. The listing then decodes the tools one by one
// (listedTool.decode), checks and keeps each, and lets its JSON go.

// maxToolBytes bounds the JSON of one listed tool: two schemas of the
// schema guard's largest and room for the rest.
const maxToolBytes = 3 * schemaguard.MaxBytes

// errNotToolsPage reports a tools/list result that is not an object with a
// list of tools.
var errNotToolsPage = errors.New("not a page of tools")

// skipJSON is a value the JSON decoder reads past without keeping
// anything.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// splitToolsPage splits a tools/list result into its tools, each a copy of
// its JSON (not decoded yet: see listedTool.decode; each copy goes once its
// tool is listed, where slices of result would hold it all until the
// page's end), and returns the page's nextCursor. It reads result one
// value at a time. It fails when result is not an object whose
// "tools", if any, is a list and whose "nextCursor", if any, is a string.
func splitToolsPage(result []byte) ([]*listedTool, string, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, "", fmt.Errorf("%w: the result is not an object", errNotToolsPage)
	}
	var tools []*listedTool
	var next string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", fmt.Errorf("%w: %v", errNotToolsPage, err)
		}
		switch tok {
		case "tools":
			if tools, err = splitTools(dec); err != nil {
				return nil, "", err
			}
		case "nextCursor":
			var cursor *string
			if err := dec.Decode(&cursor); err != nil {
				return nil, "", fmt.Errorf("%w: nextCursor: %v", errNotToolsPage, err)
			}
			next = ""
			if cursor != nil {
				next = *cursor
			}
		default:
			if err := dec.Decode(&skipJSON{}); err != nil {
				return nil, "", fmt.Errorf("%w: %v", errNotToolsPage, err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, "", fmt.Errorf("%w: %v", errNotToolsPage, err)
	}
	return tools, next, nil
}

// splitTools reads the value of "tools" from dec: a list, whose entries it
// returns undecoded, or null.
func splitTools(dec *json.Decoder) ([]*listedTool, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: tools: %v", errNotToolsPage, err)
	}
	if tok == nil {
		return nil, nil
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("%w: tools is not a list", errNotToolsPage)
	}
	tools := []*listedTool{}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: tool %d: %v", errNotToolsPage, len(tools), err)
		}
		tools = append(tools, &listedTool{raw: raw, index: len(tools)})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: tools: %v", errNotToolsPage, err)
	}
	return tools, nil
}

// emptyPage is the tools/list result the SDK decodes instead of a page the
// connector took: no tools, and the page's nextCursor.
func emptyPage(next string) []byte {
	b, _ := json.Marshal(struct {
		Tools      []struct{} `json:"tools"`
		NextCursor string     `json:"nextCursor,omitempty"`
	}{[]struct{}{}, next})
	return b
}

// take takes the page out of the result of a tools/list answer and returns
// the result the SDK decodes instead (emptyPage); a result that is not a
// page of tools is returned as it is, for the SDK to report.
func (s *taskSlot) take(result []byte) []byte {
	tools, next, err := splitToolsPage(result)
	if err != nil {
		return result
	}
	s.mu.Lock()
	if !s.done.Load() {
		s.tools, s.taken = tools, true
	}
	s.mu.Unlock()
	return emptyPage(next)
}

// takeAnswer is take for a whole JSON-RPC message, which it returns with
// the result replaced when it is an answer that brings a page of tools,
// as it is otherwise.
func (s *taskSlot) takeAnswer(msg []byte) ([]byte, bool) {
	m, err := jsonrpc.DecodeMessage(msg)
	resp, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || resp.Error != nil || !resp.ID.IsValid() {
		return msg, false
	}
	resp.Result = s.take(resp.Result)
	out, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return msg, false
	}
	return out, true
}

// pageBody is the JSON body of the answer to a tools/list request: read
// whole (its reader bounds it), the page taken out (taskSlot.takeAnswer),
// and the rest read by the SDK.
type pageBody struct {
	rc   io.ReadCloser
	slot *taskSlot
	r    *bytes.Reader // nil until the body was read
	err  error
}

func (b *pageBody) Read(p []byte) (int, error) {
	if b.r == nil && b.err == nil {
		msg, err := io.ReadAll(b.rc)
		if err != nil {
			b.err = err
			return 0, err
		}
		msg, _ = b.slot.takeAnswer(msg)
		b.r = bytes.NewReader(msg)
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

func (b *pageBody) Close() error { return b.rc.Close() }
