package anthropic_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// The streaming Messages loop, as the package documentation shows it:
// each event goes into Message.Accumulate, and once the stream ends the
// accumulated message is run like a non-streamed one. The tool_use
// inputs arrive as partial JSON; the results go back under the right ids.
func TestStreamLoop(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := an.New(tk)
	prov := newClaude(t, func(ct claudeTurn) (map[string]any, error) {
		if ct.Request.Body["stream"] != true {
			return nil, fmt.Errorf("not a streamed request")
		}
		_, remote := at.ByName(toolList(ct.Tools))
		if len(ct.Messages) == 1 {
			return message("", "tool_use",
				map[string]any{"type": "text", "text": "Let me look."},
				toolUse("toolu_1", "get_weather", map[string]any{"city": "Oslo"}),
				toolUse("toolu_2", remote, map[string]any{"query": "adapters"})), nil
		}
		asst := ct.Messages[len(ct.Messages)-2]
		if at.Str(asst, "content", 0, "text") != "Let me look." || !reflect.DeepEqual(at.Get(asst, "content", 2, "input"), map[string]any{"query": "adapters"}) {
			return nil, fmt.Errorf("the accumulated assistant turn was not sent back: %s", at.JSON(asst))
		}
		res, err := resultsOf(map[string]any{"messages": ct.Messages})
		if err != nil {
			return nil, err
		}
		got := map[string]string{}
		for id, b := range res {
			got[id] = at.Str(b, "content", 0, "text")
		}
		if want := map[string]string{"toolu_1": "Sunny in Oslo", "toolu_2": "found: adapters"}; !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("tool results = %v, want %v", got, want)
		}
		return message("", "end_turn", map[string]any{"type": "text", "text": "Sunny; docs found."}), nil
	})
	c := client(prov)
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Oslo? Search the docs."))}}
	at.Converse(t, "Sunny; docs found.", func() (string, bool) {
		var err error
		if params.Tools, err = tools.ToolParams(ctx); err != nil {
			t.Fatal(err)
		}
		stream := c.Messages.NewStreaming(ctx, params)
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		reply, ok := tools.Run(ctx, &msg)
		if !ok {
			return msg.Content[0].Text, true
		}
		params.Messages = append(params.Messages, reply)
		return "", false
	})
}
