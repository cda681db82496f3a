package eino_test

import (
	"testing"

	"github.com/cloudwego/eino/schema"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// modelTurn is a fake chat model's turn that plays a scripted model: the
// tools offered and the tool messages the conversation ends with in, an
// assistant message with the model's tool call or answer out. A script's
// error fails t as well, since the agent may not report it.
func modelTurn(t testing.TB, play at.Turn) func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
	return func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
		var offered []at.Tool
		for _, in := range infos {
			offered = append(offered, at.Tool{Name: in.Name, Description: in.Desc})
		}
		results := map[string]string{}
		for i := len(msgs) - 1; i >= 0 && msgs[i].Role == schema.Tool; i-- {
			results[msgs[i].ToolCallID] = msgs[i].Content
		}
		call, answer, err := play(offered, results)
		if err != nil {
			t.Error(err)
			return nil, err
		}
		if call == nil {
			return schema.AssistantMessage(answer, nil), nil
		}
		return schema.AssistantMessage("", []schema.ToolCall{toolCall(call.ID, call.Name, call.Args)}), nil
	}
}
