// Package policyctx marks the contexts in which a toolkit lists its tools
// without its policy's filter. The server face registers every tool and
// filters each client's lists itself; the policy engine reads every
// definition to pin it.
package policyctx

import "context"

type unfilteredKey struct{}

// Unfiltered returns a copy of ctx in which List does not hide the tools
// the policy hides.
func Unfiltered(ctx context.Context) context.Context {
	return context.WithValue(ctx, unfilteredKey{}, true)
}

// IsUnfiltered reports whether ctx was made by Unfiltered.
func IsUnfiltered(ctx context.Context) bool {
	v, _ := ctx.Value(unfilteredKey{}).(bool)
	return v
}
