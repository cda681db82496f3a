//go:build !unix

package store

// openNonblock is 0: this platform has no named pipes that block an open.
const openNonblock = 0
