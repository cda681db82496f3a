package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// memReplays is a ReplaySet shared by the servers of one test, as Redis is
// by replicas; down makes it fail.
type memReplays struct {
	mu   sync.Mutex
	seen map[string]time.Time
	down bool
}

func (m *memReplays) Redeem(_ context.Context, id string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, errors.New("connection refused")
	}
	if _, ok := m.seen[id]; ok {
		return false, nil
	}
	m.seen[id] = until
	return true, nil
}

// TestInputRoundsPassReplaySet: a relayed upstream round answered on replica A
// is refused when replayed on B and C, which share A's keys and its
// replay set; without the set each replica answers it once. A set that
// cannot be reached refuses the retry rather than risk a second answer.
func TestInputRoundsPassReplaySet(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{})
	addRequestingTools(up, true)
	m := testserver.NewMemory(up.Server)
	t.Cleanup(m.Close)
	key := bytes.Repeat([]byte{5}, 32)
	set := &memReplays{seen: map[string]time.Time{}}
	var fleet []inputPoster
	for range 3 {
		fleet = append(fleet, inputPoster{t, relayGateway(t, m, WithInputStateKeys(key), WithReplaySet(set))})
	}
	lone := []inputPoster{{t, relayGateway(t, m, WithInputStateKeys(key))}, {t, relayGateway(t, m, WithInputStateKeys(key))}}

	const answer = `{"action":"accept","content":{"name":"Ada"}}`
	retry := func(p inputPoster, state string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_user","arguments":{"name":"x"},"requestState":%q,"inputResponses":{"u":%s},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`,
			state, answer)
		return postRaw(t, p.url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask_user",
			"Authorization": "Bearer alice-1"}, body)
	}
	ask := func(p inputPoster) string {
		t.Helper()
		status, body := p.post("alice-1", "ask_user", `{"name":"x"}`, "", "")
		m := requestStateRE.FindStringSubmatch(body)
		if status != 200 || m == nil {
			t.Fatalf("first round: %d %s", status, body)
		}
		return m[1]
	}
	answered := func(what string, status int, body string) {
		t.Helper()
		if status != 200 || !strings.Contains(body, "user: accept Ada") {
			t.Errorf("%s: %d %s", what, status, body)
		}
	}

	state := ask(fleet[0])
	status, body := retry(fleet[0], state)
	answered("the retry on A", status, body)
	for i, p := range fleet[1:] {
		status, body := retry(p, state)
		refused(t, fmt.Sprintf("the replay on replica %d", i+1), status, body, "answered already")
	}

	// Without a shared set, each replica answers the same state once.
	state = ask(lone[0])
	for i, p := range lone {
		status, body := retry(p, state)
		answered(fmt.Sprintf("without a shared set, replica %d", i), status, body)
	}

	set.mu.Lock()
	set.down = true
	set.mu.Unlock()
	status, body = retry(fleet[1], ask(fleet[0]))
	refused(t, "a set that cannot be reached", status, body, "cannot be checked now")
}
