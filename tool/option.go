package tool

// Option configures a tool made by New.
type Option func(*options)

type options struct {
	meta Meta
}

// WithTitle sets the human-readable display name of the tool.
func WithTitle(title string) Option {
	return func(o *options) { o.meta.Title = title }
}

// WithReadOnly sets the hint that the tool does not modify its environment.
func WithReadOnly(v bool) Option {
	return func(o *options) { o.meta.ReadOnlyHint = v }
}

// WithDestructive sets the hint that the tool may perform destructive
// updates. Unlike the zero Meta, which leaves the hint unset, it always
// records an explicit value.
func WithDestructive(v bool) Option {
	return func(o *options) { o.meta.DestructiveHint = &v }
}

// WithIdempotent sets the hint that repeated identical calls have no
// further effect.
func WithIdempotent(v bool) Option {
	return func(o *options) { o.meta.IdempotentHint = v }
}

// WithOpenWorld sets the hint that the tool may reach entities outside a
// closed domain (the web, other systems). It always records an explicit
// value.
func WithOpenWorld(v bool) Option {
	return func(o *options) { o.meta.OpenWorldHint = &v }
}

// WithMeta replaces all the hints at once. Options given after it refine
// the result.
func WithMeta(m Meta) Option {
	return func(o *options) { o.meta = m }
}
