package genai_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// Code mode with the real SDK: Gemini is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, in three turns.
func TestCodeMode(t *testing.T) {
	tools := gg.New(at.CodeModeToolkit(t), at.CodeModeOption())
	prov := gemini(t, func(r at.Request) (any, error) {
		var offered []string
		for _, tl := range at.List(r.Body, "tools") {
			for _, d := range at.List(tl, "functionDeclarations") {
				offered = append(offered, at.Str(d, "name"))
			}
		}
		results := map[string]string{}
		if len(at.List(r.Body, "contents")) > 1 {
			res, err := responsesOf(r.Body)
			if err != nil {
				return nil, err
			}
			for id, fr := range res {
				out := at.Get(fr, "response", "output")
				if s, ok := out.(string); ok {
					results[id] = s
				} else {
					results[id] = at.JSON(out)
				}
			}
		}
		c, answer, err := at.CodeModeTurn(offered, results)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return candidate(map[string]any{"text": answer}), nil
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
			return nil, err
		}
		return candidate(call(c.ID, c.Name, args)), nil
	})
	ctx := context.Background()
	cl := client(t, prov)
	contents := []*genai.Content{genai.NewContentFromText("Which city is warmest, and how many documents match?", genai.RoleUser)}
	fns, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at.ConverseTurns(t, at.CodeModeAnswer, 3, func() (string, bool) {
		resp, err := cl.Models.GenerateContent(ctx, modelName, contents, &genai.GenerateContentConfig{Tools: fns})
		if err != nil {
			t.Fatal(err)
		}
		reply, ok := tools.Run(ctx, resp)
		if !ok {
			return resp.Text(), true
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
		return "", false
	})
}
