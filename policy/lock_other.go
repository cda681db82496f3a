//go:build !unix

package policy

import "os"

// lockFile does nothing where advisory locks are not available: one
// process at a time should use a pins file there.
func lockFile(*os.Root, string, string) (unlock func(), err error) { return func() {}, nil }
