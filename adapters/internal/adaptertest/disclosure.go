package adaptertest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/model"
)

// The conversation of the disclosure tests: the model is offered the
// search tool and Always; it searches with SearchArgs, the search finds
// RemoteTool, which the next request offers; the model calls it
// (CallArgs) and answers DisclosureAnswer.
const (
	Always           = "get_weather"
	SearchID         = "call_search"
	SearchArgs       = `{"query":"search the documentation","limit":1}`
	CallID           = "call_kb"
	CallArgs         = `{"query":"adapters"}`
	DisclosureAnswer = "The docs mention adapters."
	// FoundAnswer is the model's answer when the search found the tool
	// but it is not offered yet (an agent run whose tools were bound when
	// it started).
	FoundAnswer = "Found the tool."
)

// DisclosureOption is the adapter option of the disclosure tests: Always
// is offered on every request.
func DisclosureOption() adapter.Option {
	return adapter.WithDisclosure(model.WithAlways(model.Filter{Names: []string{Always}}))
}

// Call is a tool call the scripted model makes.
type Call struct {
	ID, Name, Args string
}

// DisclosureTurn is the scripted model of the disclosure tests, a Turn
// that looks at the offered tools' names only:
//
//   - nothing found yet: the request must offer exactly the search tool
//     and Always, and the model searches;
//   - the search's result names the remote tool, which the request does
//     not offer (yet): the model answers FoundAnswer;
//   - the request offers the remote tool (after the search tool and
//     Always): the model calls it;
//   - its result is there: the model answers DisclosureAnswer.
func DisclosureTurn(tools []Tool, results map[string]string) (call *Call, answer string, err error) {
	offered := names(tools)
	remote := ""
	for _, n := range offered {
		if IsRemote(n) {
			remote = n
		}
	}
	switch {
	case results[CallID] != "":
		if got := results[CallID]; got != "found: adapters" {
			return nil, "", fmt.Errorf("the found tool's result = %q", got)
		}
		return nil, DisclosureAnswer, nil
	case remote != "":
		if want := []string{model.DefaultSearchToolName, Always, remote}; !reflect.DeepEqual(offered, want) {
			return nil, "", fmt.Errorf("after the search the tools are %v, want %v", offered, want)
		}
		return &Call{ID: CallID, Name: remote, Args: CallArgs}, "", nil
	case results[SearchID] != "":
		found := results[SearchID]
		if !strings.Contains(found, RemoteNS+model.Separator+"docs_search_") || !strings.Contains(found, "Searches the documentation.") {
			return nil, "", fmt.Errorf("the search found %s", found)
		}
		return nil, FoundAnswer, nil
	case len(results) > 0:
		return nil, "", fmt.Errorf("unexpected results %v", results)
	}
	if want := []string{model.DefaultSearchToolName, Always}; !reflect.DeepEqual(offered, want) {
		return nil, "", fmt.Errorf("the first request offers %v, want %v", offered, want)
	}
	return &Call{ID: SearchID, Name: model.DefaultSearchToolName, Args: SearchArgs}, "", nil
}

// ConverseTurns is Converse for a conversation that must end on turn n.
func ConverseTurns(t testing.TB, want string, n int, turn func() (answer string, done bool)) {
	t.Helper()
	for i := 1; i <= n+2; i++ {
		answer, done := turn()
		if !done {
			continue
		}
		if answer != want {
			t.Fatalf("answer = %q, want %q", answer, want)
		}
		if i != n {
			t.Errorf("the model answered on turn %d, want %d", i, n)
		}
		return
	}
	t.Fatalf("no answer after %d turns", n+2)
}
