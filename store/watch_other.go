//go:build !linux

package store

import "context"

// watch polls the directory every DefaultPollInterval: this platform has no
// change notification the store uses.
func (d *Dir) watch(ctx context.Context) error {
	return d.runPoll(ctx, DefaultPollInterval)
}
