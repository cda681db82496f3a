package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/llmkit/toolkit"
)

// WithNamespaces makes the server serve only the items of the given
// sources (toolkit namespaces: a connector's, "builtin", "user"): their
// tools, prompts, resources, templates and skills, and nothing of any
// other source, which its clients cannot list, call, get or read; of the
// extensions its connectors' servers declare it advertises only theirs
// (beside WithExtensions). With
// one namespace its items keep their own names (nothing collides), so a
// server of one upstream looks to its clients like that upstream.
//
// It is how a gateway serves each upstream at an endpoint of its own
// beside the one of all: an MCP Apps host tells servers apart by their
// connection, and keeps one server's app from calling the tools another
// server reserves for its own app (`_meta.ui.visibility: ["app"]`), a
// rule it cannot apply when every server shares one connection. Policy,
// audit and limits apply as on any server of the toolkit. A namespace
// the toolkit does not have (yet) serves nothing until it comes. An empty
// namespace makes New fail; no namespaces (the default) serve all.
func WithNamespaces(namespaces ...string) Option {
	return func(c *config) error {
		if slices.Contains(namespaces, "") {
			return fmt.Errorf("%w: WithNamespaces: an empty namespace", toolkit.ErrBadParameter)
		}
		if len(namespaces) > 0 {
			c.namespaces = map[string]bool{}
			for _, ns := range namespaces {
				c.namespaces[ns] = true
			}
		}
		return nil
	}
}

// serves reports whether the server serves the items of namespace ns.
func (s *Server) serves(ns string) bool {
	return s.cfg.namespaces == nil || s.cfg.namespaces[ns]
}

// list is the toolkit's List restricted to the namespaces the server
// serves (WithNamespaces): the items of the others are left out of the
// answer and of its Count, and a request for one of them finds nothing.
func (s *Server) list(ctx context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error) {
	if s.cfg.namespaces == nil {
		return s.tk.List(ctx, req)
	}
	if req.Namespace != "" && !s.serves(req.Namespace) {
		return nil, fmt.Errorf("%w: namespace %q is not served here", toolkit.ErrNotFound, req.Namespace)
	}
	limit, offset := req.Limit, req.Offset
	req.Limit, req.Offset = nil, 0
	resp, err := s.tk.List(ctx, req)
	if err != nil {
		return nil, err
	}
	items := slices.DeleteFunc(resp.Items, func(it toolkit.Item) bool { return !s.serves(it.Namespace) })
	out := &toolkit.ListResponse{Count: uint(len(items)), Offset: offset, Limit: limit}
	items = items[min(int(offset), len(items)):]
	if limit != nil {
		items = items[:min(int(*limit), len(items))]
	}
	out.Items = items
	return out, nil
}
