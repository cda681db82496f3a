package peers

import (
	"os"
	"path/filepath"
	"testing"
)

// filesystemRel is the entry point of the reference filesystem server
// below the repository root.
const filesystemRel = "tools/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

// FilesystemStdio returns the command line that runs the reference
// filesystem server (@modelcontextprotocol/server-filesystem) over stdio
// with Node 22, given no directories: the server then works in the roots
// its client offers. It skips the test when the peers are not installed.
func FilesystemStdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	in := usable(t)
	entry := filepath.Join(in.root, filesystemRel)
	if _, err := os.Stat(entry); err != nil {
		unavailable(t, err)
	}
	return in.node, []string{entry}
}
