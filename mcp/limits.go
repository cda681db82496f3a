package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
)

// takeSlot waits for one of the Limits.MaxConcurrency slots, or for ctx to
// end; the function it returns gives the slot back. Without a limit it
// returns at once.
func (c *Connector) takeSlot(ctx context.Context) (func(), error) {
	if c.calls.slots == nil {
		return func() {}, nil
	}
	select {
	case c.calls.slots <- struct{}{}:
		return func() { <-c.calls.slots }, nil
	default:
	}
	if c.o.hooks.queued != nil {
		c.o.hooks.queued()
	}
	select {
	case c.calls.slots <- struct{}{}:
		return func() { <-c.calls.slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// contentSize is the size of the data MCP content blocks carry: their
// texts and decoded bytes (links count their URI). It measures what was
// already decoded, without encoding anything.
func contentSize(blocks ...sdk.Content) int64 {
	var n int64
	for _, ct := range blocks {
		switch v := ct.(type) {
		case *sdk.TextContent:
			n += int64(len(v.Text))
		case *sdk.ImageContent:
			n += int64(len(v.Data))
		case *sdk.AudioContent:
			n += int64(len(v.Data))
		case *sdk.EmbeddedResource:
			n += resourceSize(v.Resource)
		case *sdk.ResourceLink:
			n += int64(len(v.URI))
		}
	}
	return n
}

// resourceSize is the size of the text or bytes of resource contents.
func resourceSize(rcs ...*sdk.ResourceContents) int64 {
	var n int64
	for _, rc := range rcs {
		if rc != nil {
			n += int64(len(rc.Text)) + int64(len(rc.Blob))
		}
	}
	return n
}

// checkSize fails a result of size bytes that exceeds Limits.MaxResultBytes.
func (c *Connector) checkSize(what reqName, size int64) error {
	if c.o.maxResult > 0 && size > c.o.maxResult {
		return fmt.Errorf("%w: %s of server %s: result of %d bytes exceeds the limit of %d bytes (Limits.MaxResultBytes)", errs.ErrToolFailed, what, c.serverName(), size, c.o.maxResult)
	}
	return nil
}
