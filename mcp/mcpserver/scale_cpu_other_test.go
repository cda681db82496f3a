//go:build !unix

package mcpserver

import "time"

// cpuTime reports nothing where getrusage is missing.
func cpuTime() time.Duration { return 0 }
