package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// errLineTooLong reports a message from a stdio server longer than
// Limits.MaxMessageBytes; it ends the session.
var errLineTooLong = errors.New("a message of the server is longer than the limit (Limits.MaxMessageBytes)")

// lineConn is the connection to a stdio server: one JSON-RPC message (or
// batch) a line. It reads lines through jsonLines, whose buffer is let go
// after a large message, where the go-sdk's IOTransport keeps its
// decoder's buffer at twice the largest message for the session's life.
type lineConn struct {
	w    io.WriteCloser // the server's stdin
	r    io.Closer      // the server's stdout
	wmu  sync.Mutex
	in   chan lineMsg
	done chan struct{}
	once sync.Once

	queue []jsonrpc.Message // the rest of a batch; read by Read only
}

type lineMsg struct {
	msgs []jsonrpc.Message
	err  error
}

var _ sdk.Connection = (*lineConn)(nil)

// newLineConn starts reading lines; scan, if not nil, sees every line as it
// arrives (notifications are delivered from there).
func newLineConn(lines *jsonLines, scan *noteScanner, max int, stdin io.WriteCloser, stdout io.Closer) *lineConn {
	c := &lineConn{w: stdin, r: stdout, in: make(chan lineMsg), done: make(chan struct{})}
	go c.read(lines, scan, max)
	return c
}

func (c *lineConn) read(lines *jsonLines, scan *noteScanner, max int) {
	for {
		var m lineMsg
		line, long, err := lines.nextLine()
		switch {
		case err != nil:
			m.err = err
		case long || max > 0 && len(line) > max:
			m.err = errLineTooLong
		default:
			if scan != nil {
				scan.feed(line)
				scan.feed(newline)
			}
			// The line's buffer is reused for the next one, and nothing
			// decoded keeps it: the SDK's decoder reads it through a
			// reader of its own and encoding/json copies raw messages.
			m.msgs, m.err = decodeLine(line)
			if m.err != nil {
				// Nested deeper than the SDK decodes (package internal/wire)?
				if fixed, ok := wire.ClampLine(line); ok {
					m.msgs, m.err = decodeLine(fixed)
				}
			}
		}
		select {
		case c.in <- m:
		case <-c.done:
			return
		}
		if m.err != nil {
			return
		}
	}
}

var newline = []byte{'\n'}

// decodeLine decodes a message or a batch of messages.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	if line[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, fmt.Errorf("decoding a message of the server: %w", err)
		}
		return []jsonrpc.Message{msg}, nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return nil, fmt.Errorf("decoding a batch of the server: %v", err)
	}
	msgs := make([]jsonrpc.Message, 0, len(batch))
	for _, raw := range batch {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("decoding a message of the server: %w", err)
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// Read returns the next message of the server.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	case m := <-c.in:
		if m.err != nil {
			return nil, m.err
		}
		c.queue = m.msgs[1:]
		return m.msgs[0], nil
	}
}

// Write sends msg to the server, one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	if bytes.IndexByte(data, '\n') >= 0 {
		return fmt.Errorf("encoding a message: a line end inside it")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return sdk.ErrConnectionClosed
	default:
	}
	if _, err := c.w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("%w: %v", sdk.ErrConnectionClosed, err)
	}
	return nil
}

// Close ends the connection; the process is ended by procConn.
func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.wmu.Lock()
		c.w.Close()
		c.wmu.Unlock()
		c.r.Close()
	})
	return nil
}

// SessionID returns "": stdio has no session ID.
func (c *lineConn) SessionID() string { return "" }
