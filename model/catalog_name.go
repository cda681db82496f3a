package model

import (
	"context"
	"fmt"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
)

// NameFor returns the model name of the tool (or prompt) that key stands
// for, among the items f keeps: what a request's tool choice names to make
// the model call it. key is an item's key ("ns.name", Item.Key) or any key
// the toolkit's LookupItem resolves (a bare name: builtins first, then
// connectors in registration order); over a Lister without LookupItem, a
// bare name is the first tool, then prompt, of that name in List order. An
// error wrapping ErrNotFound says that key resolves to nothing the
// catalog offers: no such item, a resource, an item f leaves out, or a tool
// the toolkit's policy hides from the caller of ctx.
func (c *Catalog) NameFor(ctx context.Context, key string, f Filter) (string, error) {
	s, err := c.refresh(ctx)
	if err != nil {
		return "", err
	}
	pos := -1
	if l, ok := c.tk.(itemLooker); ok {
		it, err := l.LookupItem(ctx, key)
		if err != nil {
			return "", fmt.Errorf("%w: %q names no tool the model is offered: %w", errs.ErrNotFound, key, err)
		}
		pos = s.position(it)
	} else {
		pos = s.find(key)
	}
	if pos < 0 || !c.keep(ctx, f)(s.items[pos]) {
		return "", fmt.Errorf("%w: %q names no tool the model is offered", errs.ErrNotFound, key)
	}
	return s.names[pos], nil
}

// position returns the position of the item with it's identity in s, or
// -1.
func (s *snapshot) position(it toolkit.Item) int {
	for i, x := range s.items {
		if x.Type == it.Type && x.Namespace == it.Namespace && x.Name == it.Name {
			return i
		}
	}
	return -1
}

// find returns the position in s of the item of key ("ns.name"), else of
// the first item named key, or -1.
func (s *snapshot) find(key string) int {
	for i, x := range s.items {
		if x.Key() == key {
			return i
		}
	}
	for i, x := range s.items {
		if x.Name == key {
			return i
		}
	}
	return -1
}
