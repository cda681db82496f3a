package mcp

import (
	"maps"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// serverExtensions returns the extensions a server declares, bounded like
// a `_meta` (meta.go): a declaration past the bounds is ignored with a
// warning.
func (c *Connector) serverExtensions(caps *sdk.ServerCapabilities) toolkit.Extensions {
	if caps == nil || len(caps.Extensions) == 0 {
		return ""
	}
	if err := checkMeta(caps.Extensions); err != nil {
		c.logger.Warn("ignoring the server's extensions", "error", err)
		return ""
	}
	ext, err := toolkit.NewExtensions(caps.Extensions)
	if err != nil {
		c.logger.Warn("ignoring the server's extensions", "error", err)
	}
	return ext
}

// clientExtensions returns the extensions an upstream session declares:
// OptExtensions', and those of the client it serves (nil for the shared
// session), the client's settings winning. A client's declaration past
// the bounds of a `_meta` (meta.go) is left out.
func (c *Connector) clientExtensions(client *sdk.ClientCapabilities) map[string]any {
	if client == nil || len(client.Extensions) == 0 || checkMeta(client.Extensions) != nil {
		return c.o.extensions
	}
	m := maps.Clone(c.o.extensions)
	if m == nil {
		m = make(map[string]any, len(client.Extensions))
	}
	maps.Copy(m, client.Extensions)
	return m
}
