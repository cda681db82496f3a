package anthropic_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// claudeTurn is what the fake Claude API hands its turn function: the
// whole conversation (a thread's stored history, then the request's
// messages) and the tools in force (the thread's, changed by the
// tool_addition and tool_removal blocks of system messages).
type claudeTurn struct {
	Request   at.Request
	Messages  []any
	Tools     map[string]map[string]any
	Continued bool // the request continued a thread
}

// claudeThread is what the fake keeps of a thread, under the id of the
// reply that ends it.
type claudeThread struct {
	messages []any
	tools    []any
}

// newClaude starts a fake Messages API that keeps message threads as the
// API documents them: a request with "thread":{"type":"create"} starts
// one, "continue" with a previous_message_id sends only the new messages
// (and neither tools nor system), and tool changes come as system messages.
// turn returns the assistant message (its id is set here); it is streamed
// when the request asks for a stream.
func newClaude(t *testing.T, turn func(claudeTurn) (map[string]any, error)) *at.Provider {
	var mu sync.Mutex
	threads := map[string]claudeThread{}
	n := 0
	return at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Method != "POST" || r.Path != "/v1/messages" {
			return nil, fmt.Errorf("unexpected %s %s", r.Method, r.Path)
		}
		ct := claudeTurn{Request: r}
		var base claudeThread
		switch thread := at.Get(r.Body, "thread"); at.Str(thread, "type") {
		case "continue":
			if !strings.Contains(r.Header.Get("Anthropic-Beta"), "message-threads-") {
				return nil, fmt.Errorf("a thread without the message threads beta")
			}
			if r.Body["tools"] != nil || r.Body["system"] != nil {
				return nil, fmt.Errorf("tools or system sent on a continued thread")
			}
			mu.Lock()
			prev, ok := threads[at.Str(thread, "previous_message_id")]
			mu.Unlock()
			if !ok {
				return nil, fmt.Errorf("no thread ends with %s", at.Str(thread, "previous_message_id"))
			}
			base, ct.Continued = prev, true
		case "create", "":
			base.tools = at.List(r.Body, "tools")
		default:
			return nil, fmt.Errorf("thread %s", at.JSON(thread))
		}
		ct.Messages = append(append([]any(nil), base.messages...), at.List(r.Body, "messages")...)
		ct.Tools = map[string]map[string]any{}
		for _, tl := range base.tools {
			ct.Tools[at.Str(tl, "name")] = tl.(map[string]any)
		}
		for _, m := range ct.Messages {
			if at.Str(m, "role") != "system" {
				continue
			}
			for _, b := range at.List(m, "content") {
				switch at.Str(b, "type") {
				case "tool_addition":
					if !strings.Contains(r.Header.Get("Anthropic-Beta"), "inline-tools-") {
						return nil, fmt.Errorf("a tool_addition without the inline tools beta")
					}
					def, _ := at.Get(b, "tool", "definition").(map[string]any)
					ct.Tools[at.Str(def, "name")] = def
				case "tool_removal":
					delete(ct.Tools, at.Str(b, "tool", "name"))
				}
			}
		}
		reply, err := turn(ct)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		n++
		reply["id"] = fmt.Sprintf("msg_%d", n)
		threads[reply["id"].(string)] = claudeThread{
			messages: append(ct.Messages, map[string]any{"role": "assistant", "content": reply["content"]}),
			tools:    base.tools,
		}
		mu.Unlock()
		if r.Body["stream"] == true {
			return at.MessageStream(reply), nil
		}
		return reply, nil
	})
}
