//go:build !linux

package mcp

// stdioMarkerEnv is not set where processes cannot be found by their
// environment.
const stdioMarkerEnv = ""

func newMarker() string { return "" }

func descendants(pid int) map[int]uint64 { return nil }

func killEscaped(marker string, tree map[int]uint64) {}
