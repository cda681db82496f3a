package mcpserver

import (
	"context"
	"maps"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// The server advertises, in capabilities.extensions (SEP-1724), the
// extensions its sources provide: those of WithExtensions first, then
// those each connector's server declares (toolkit.ConnectorState), in
// registration order, the first settings of an id winning. They are added
// to each initialize and server/discover answer, so a client that
// arrives after an upstream connected sees what it brings.

// extensionsCache is the advertised extensions as last merged, with the
// connectors' declarations they were merged from.
type extensionsCache struct {
	key string
	ext map[string]any
}

// advertised returns the extensions to advertise now (nil for none).
func (s *Server) advertised() map[string]any {
	states := s.tk.Connectors()
	if s.cfg.namespaces != nil {
		// A server of some sources advertises only theirs.
		var served []toolkit.ConnectorState
		for _, st := range states {
			if s.serves(st.Namespace) {
				served = append(served, st)
			}
		}
		states = served
	}
	var key strings.Builder
	for _, st := range states {
		key.WriteString(string(st.Extensions))
		key.WriteByte(0)
	}
	if c := s.extCache.Load(); c != nil && c.key == key.String() {
		return c.ext
	}
	ext := maps.Clone(s.cfg.extensions)
	for _, st := range states {
		m, err := st.Extensions.Map()
		if err != nil {
			continue
		}
		for id, v := range m {
			if _, ok := ext[id]; ok {
				continue
			}
			if ext == nil {
				ext = map[string]any{}
			}
			ext[id] = v
		}
	}
	s.extCache.Store(&extensionsCache{key: key.String(), ext: ext})
	return ext
}

// extensionsMiddleware adds the advertised extensions to the capabilities
// of initialize and server/discover answers.
func (s *Server) extensionsMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || (method != "initialize" && method != "server/discover") {
			return res, err
		}
		addExtensions(res, s.advertised())
		return res, err
	}
}

// addExtensions adds to the capabilities of res, the result of an
// initialize or a server/discover, each extension of ext they do not
// declare already. The capabilities are copied, never changed in place:
// the SDK may share them between sessions.
func addExtensions(res sdk.Result, ext map[string]any) {
	var caps **sdk.ServerCapabilities
	switch r := res.(type) {
	case *sdk.InitializeResult:
		caps = &r.Capabilities
	case *sdk.DiscoverResult:
		caps = &r.Capabilities
	}
	if len(ext) == 0 || caps == nil || *caps == nil {
		return
	}
	c := **caps
	c.Extensions = maps.Clone(c.Extensions)
	if c.Extensions == nil {
		c.Extensions = make(map[string]any, len(ext))
	}
	for id, v := range ext {
		if _, ok := c.Extensions[id]; !ok {
			c.Extensions[id] = v
		}
	}
	*caps = &c
}
