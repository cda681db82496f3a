package genai_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// A Disclosed view with the real SDK: the first request declares the
// search function (in Gemini's schema subset) and the always-offered
// function only; Gemini searches; the function found is declared in the
// next request, and its call runs in the toolkit.
func TestDisclosed(t *testing.T) {
	tk := at.Toolkit(t)
	var found model.Loaded
	conv := gg.New(tk, at.DisclosureOption()).Disclosed(&found)

	prov := gemini(t, func(r at.Request) (any, error) {
		var offered []string
		for _, tl := range at.List(r.Body, "tools") {
			for _, d := range at.List(tl, "functionDeclarations") {
				offered = append(offered, at.Str(d, "name"))
			}
		}
		results := map[string]string{}
		contents := at.List(r.Body, "contents")
		if len(contents) > 1 {
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
		c, answer, err := at.DisclosureTurn(offered, results)
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
	contents := []*genai.Content{genai.NewContentFromText("Search the docs for adapters.", genai.RoleUser)}
	at.ConverseTurns(t, at.DisclosureAnswer, 3, func() (string, bool) {
		fns, err := conv.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cl.Models.GenerateContent(ctx, modelName, contents, &genai.GenerateContentConfig{Tools: fns})
		if err != nil {
			t.Fatal(err)
		}
		reply, ok := conv.Run(ctx, resp)
		if !ok {
			return resp.Text(), true
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
		return "", false
	})
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
}
