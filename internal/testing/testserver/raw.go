package testserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RawRequest is a JSON-RPC message received by a Raw server.
type RawRequest struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Raw is a line-based JSON-RPC server over in-memory pipes whose answers
// are whatever Handle returns, byte for byte: garbage included.
type Raw struct {
	// Handle returns the lines to write for a message (nil: none). A
	// line must not contain a newline; one is added.
	Handle func(req RawRequest) [][]byte
	// Ended, if set, receives a value (without blocking: give it room)
	// each time a connection ends because the client closed its end or
	// Close was called.
	Ended chan struct{}

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// Dial returns the client end of a fresh connection to the server.
func (r *Raw) Dial(ctx context.Context) (sdk.Transport, error) {
	c1, c2 := net.Pipe()
	r.mu.Lock()
	r.conns = append(r.conns, c2)
	r.mu.Unlock()
	r.wg.Add(1)
	go r.serve(c2)
	return &sdk.IOTransport{Reader: c1, Writer: c1}, nil
}

func (r *Raw) serve(c net.Conn) {
	defer r.wg.Done()
	defer func() {
		if r.Ended != nil {
			select {
			case r.Ended <- struct{}{}:
			default:
			}
		}
	}()
	defer c.Close()
	serveLines(c, c, r.Handle)
}

// serveLines reads JSON-RPC messages from r, one a line, and writes the
// lines handle returns for each to w, until r ends or a write fails.
func serveLines(r io.Reader, w io.Writer, handle func(RawRequest) [][]byte) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var req RawRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			continue
		}
		for _, line := range handle(req) {
			if _, err := w.Write(append(line, '\n')); err != nil {
				return
			}
		}
	}
}

// Close closes every connection and waits for the serving goroutines.
func (r *Raw) Close() {
	r.mu.Lock()
	cs := r.conns
	r.conns = nil
	r.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
	r.wg.Wait()
}

// Result returns the line of a successful answer to req.
func Result(req RawRequest, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, b)
}

// RawResult returns the line of an answer to req whose result is raw,
// which need not be valid JSON.
func RawResult(req RawRequest, raw string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, raw)
}

// MethodNotFound returns the line of a JSON-RPC "method not found" error
// answering req. A client speaking the 2026-07-28 protocol first sends
// server/discover and falls back to initialize on this answer.
func MethodNotFound(req RawRequest) []byte {
	msg, _ := json.Marshal("method not found: " + req.Method)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`, req.ID, msg)
}

// Initialize answers an initialize request with a server named name that
// offers tools, prompts and resources with list_changed.
func Initialize(req RawRequest, name string) []byte {
	return Result(req, map[string]any{
		"protocolVersion": "2025-11-25",
		"serverInfo":      map[string]any{"name": name, "version": "0"},
		"capabilities": map[string]any{
			"tools":     map[string]any{"listChanged": true},
			"prompts":   map[string]any{"listChanged": true},
			"resources": map[string]any{"listChanged": true},
		},
	})
}
