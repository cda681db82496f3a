package mcpserver

import (
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSubscriptions bounds the resources one client session may follow:
// the URIs templates match have no other bound.
const maxSubscriptions = 1024

// subscriptions records the resources each session follows, to bound
// them. A session's record goes when the session ends.
type subscriptions struct {
	mu sync.Mutex
	by map[*sdk.ServerSession]map[string]bool
}

// add records that ss follows uri; it fails when ss already follows
// maxSubscriptions other resources.
func (t *subscriptions) add(ss *sdk.ServerSession, uri string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	uris := t.by[ss]
	if uris == nil {
		if t.by == nil {
			t.by = map[*sdk.ServerSession]map[string]bool{}
		}
		uris = map[string]bool{}
		t.by[ss] = uris
		go func() {
			_ = ss.Wait()
			t.mu.Lock()
			delete(t.by, ss)
			t.mu.Unlock()
		}()
	}
	if !uris[uri] && len(uris) >= maxSubscriptions {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("a session may follow at most %d resources", maxSubscriptions)}
	}
	uris[uri] = true
	return nil
}

// remove records that ss no longer follows uri.
func (t *subscriptions) remove(ss *sdk.ServerSession, uri string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.by[ss], uri)
}

// count returns how many resources ss follows.
func (t *subscriptions) count(ss *sdk.ServerSession) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.by[ss])
}
