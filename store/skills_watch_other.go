//go:build !linux

package store

import "context"

// watchAll runs watch, whose rescans read the skills too.
func (d *Dir) watchAll(ctx context.Context) error { return d.watch(ctx) }
