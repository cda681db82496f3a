package toolkit

import (
	"context"
	"errors"
	"fmt"
)

// ResolveTools resolves the names of a prompt's allowed tools (bare or
// qualified, with the same rules as Lookup) to the items they reach, in the
// order given. A name may reach a prompt, which a model calls like a tool.
// Every name that reaches nothing, or reaches a resource, is reported in one
// error that wraps ErrNotFound or ErrBadParameter and names it.
func (tk *Toolkit) ResolveTools(ctx context.Context, names ...string) ([]Item, error) {
	s := tk.snap.Load()
	items := make([]Item, 0, len(names))
	var errs []error
	for _, name := range names {
		e, err := s.lookup(name)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("allowed tool %q: %w", name, err))
		case e.kind == KindResource:
			errs = append(errs, fmt.Errorf("%w: allowed tool %q is a resource", ErrBadParameter, name))
		default:
			items = append(items, e.item)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return items, nil
}

// PromptTools resolves the allowed tools of p (a prompt that lists them
// through a Tools() []string method, as markdown prompts do) with
// ResolveTools. A prompt that lists none gets none.
func (tk *Toolkit) PromptTools(ctx context.Context, p Prompt) ([]Item, error) {
	lister, ok := p.(interface{ Tools() []string })
	if !ok {
		return nil, nil
	}
	items, err := tk.ResolveTools(ctx, lister.Tools()...)
	if err != nil {
		return nil, fmt.Errorf("prompt %q: %w", p.Name(), err)
	}
	return items, nil
}
