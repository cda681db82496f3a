package genai_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// The streaming loop, as the package documentation shows it: each chunk
// goes into an Accumulator, and once the stream ends the merged response
// is run and kept in the history like a non-streamed one. The text and
// the calls arrive in separate chunks; the model's turn goes back whole.
func TestStreamLoop(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := gg.New(tk)
	prov := gemini(t, func(r at.Request) (any, error) {
		if r.Path != "/v1beta/models/"+modelName+":streamGenerateContent" {
			return nil, fmt.Errorf("unexpected %s %s", r.Method, r.Path)
		}
		_, remote := declarations(r.Body)
		contents := at.List(r.Body, "contents")
		if len(contents) == 1 {
			return at.GeminiStream(candidate(map[string]any{"text": "Let me look."},
				call("fc_1", "get_weather", map[string]any{"city": "Oslo"}),
				call("fc_2", remote, map[string]any{"query": "adapters"}))), nil
		}
		turn := contents[len(contents)-2]
		if parts := at.List(turn, "parts"); len(parts) != 3 || at.Str(parts[0], "text") != "Let me look." ||
			at.Str(parts[2], "functionCall", "name") != remote {
			return nil, fmt.Errorf("the merged model turn was not sent back: %s", at.JSON(turn))
		}
		res, err := responsesOf(r.Body)
		if err != nil {
			return nil, err
		}
		got := map[string]string{}
		for id, fr := range res {
			got[id] = at.Str(fr, "response", "output")
		}
		if want := map[string]string{"fc_1": "Sunny in Oslo", "fc_2": "found: adapters"}; !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("function responses = %v, want %v", got, want)
		}
		return at.GeminiStream(candidate(map[string]any{"text": "Sunny; docs found."})), nil
	})
	c := client(t, prov)
	contents := []*genai.Content{genai.NewContentFromText("Weather in Oslo? Search the docs.", genai.RoleUser)}
	at.Converse(t, "Sunny; docs found.", func() (string, bool) {
		fns, err := tools.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var acc gg.Accumulator
		chunks := 0
		for chunk, err := range c.Models.GenerateContentStream(ctx, modelName, contents, &genai.GenerateContentConfig{Tools: fns}) {
			if err != nil {
				t.Fatal(err)
			}
			if err := acc.Add(chunk); err != nil {
				t.Fatal(err)
			}
			chunks++
		}
		if chunks < 2 {
			t.Errorf("%d chunks: the fake did not stream", chunks)
		}
		resp := acc.Response()
		reply, ok := tools.Run(ctx, resp)
		if !ok {
			return resp.Text(), true
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
		return "", false
	})
}

func boolp(b bool) *bool      { return &b }
func nump(f float64) *float64 { return &f }

// A function call streamed in pieces (Vertex AI's streamed function call
// arguments) becomes one call with every argument, string pieces joined;
// text parts are joined around it, thoughts apart, and a part with a
// thought signature keeps it.
func TestAccumulatorPieces(t *testing.T) {
	ctx := context.Background()
	tools := gg.New(at.Local(t))
	if _, err := tools.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	chunk := func(finish genai.FinishReason, parts ...*genai.Part) *genai.GenerateContentResponse {
		return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: finish}}}
	}
	var acc gg.Accumulator
	for _, ch := range []*genai.GenerateContentResponse{
		chunk("", &genai.Part{Text: "Thinking", Thought: true}, &genai.Part{Text: " hard.", Thought: true}),
		chunk("", &genai.Part{Text: "Let "}, &genai.Part{Text: "me look."}),
		chunk("", &genai.Part{ThoughtSignature: []byte("sig"), FunctionCall: &genai.FunctionCall{ID: "c1", Name: "get_weather", WillContinue: boolp(true),
			PartialArgs: []*genai.PartialArg{{JsonPath: "$.city", StringValue: "Os", WillContinue: boolp(true)}}}}),
		chunk("", &genai.Part{FunctionCall: &genai.FunctionCall{
			PartialArgs: []*genai.PartialArg{{JsonPath: "$.city", StringValue: "lo"}}}}),
		chunk("", &genai.Part{FunctionCall: &genai.FunctionCall{ID: "c2", Name: "plan", WillContinue: boolp(true)}}),
		chunk("", &genai.Part{FunctionCall: &genai.FunctionCall{PartialArgs: []*genai.PartialArg{
			{JsonPath: "$.days", NumberValue: nump(3)},
			{JsonPath: "$.opts.units[1]", StringValue: "C"},
			{JsonPath: "$['a b']", NULLValue: "NULL_VALUE"},
			{JsonPath: "$.flag", BoolValue: boolp(true)},
		}}}),
		chunk(genai.FinishReasonStop, &genai.Part{Text: "", ThoughtSignature: []byte("end")}),
	} {
		if err := acc.Add(ch); err != nil {
			t.Fatal(err)
		}
	}
	resp := acc.Response()
	parts := resp.Candidates[0].Content.Parts
	if len(parts) != 5 || parts[0].Text != "Thinking hard." || !parts[0].Thought || parts[1].Text != "Let me look." ||
		string(parts[4].ThoughtSignature) != "end" || resp.Candidates[0].FinishReason != genai.FinishReasonStop {
		t.Fatalf("parts: %s", at.JSON(parts))
	}
	fc := parts[2].FunctionCall
	if fc == nil || fc.ID != "c1" || fc.Name != "get_weather" || !reflect.DeepEqual(fc.Args, map[string]any{"city": "Oslo"}) ||
		string(parts[2].ThoughtSignature) != "sig" {
		t.Fatalf("first call: %s", at.JSON(parts[2]))
	}
	fc = parts[3].FunctionCall
	want := map[string]any{"days": 3.0, "opts": map[string]any{"units": []any{nil, "C"}}, "a b": nil, "flag": true}
	if fc == nil || fc.ID != "c2" || fc.Name != "plan" || !reflect.DeepEqual(fc.Args, want) {
		t.Fatalf("second call: %s", at.JSON(parts[3]))
	}
	reply, ok := tools.Run(ctx, resp)
	if !ok || len(reply.Parts) != 2 || reply.Parts[0].FunctionResponse.Response["output"] != "Sunny in Oslo" {
		t.Errorf("run: %s", at.JSON(reply))
	}

	// A malformed path loses its call, not the rest.
	var bad gg.Accumulator
	err := bad.Add(chunk("", &genai.Part{FunctionCall: &genai.FunctionCall{Name: "get_weather",
		PartialArgs: []*genai.PartialArg{{JsonPath: "city", StringValue: "x"}}}}, &genai.Part{Text: "after"}))
	if err == nil || !errors.Is(err, gg.ErrStreamedArgument) {
		t.Errorf("malformed path: %v", err)
	}
	if got := bad.Response().Candidates[0].Content.Parts; len(got) != 1 || got[0].Text != "after" {
		t.Errorf("after a malformed path: %s", at.JSON(got))
	}
}

// FuzzAccumulatorPath merges a streamed argument under any path: a bad
// path is an error, never a panic, and a good one sets a value.
func FuzzAccumulatorPath(f *testing.F) {
	for _, s := range []string{"$.a", "$.a.b[0]", "$['a b']", `$["q\"x"]`, "$[0]", "$", "", "a", "$.", "$[", "$[99999999999]", "$[-1]",
		"$.a[0].a[0]", "$.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g", "$['unclosed", "$.a$", "$[4096]", "$.a[1]['b']"} {
		f.Add(s, "$.a")
	}
	f.Fuzz(func(t *testing.T, path, second string) {
		var acc gg.Accumulator
		for _, p := range []string{path, second} {
			_ = acc.Add(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{
				{FunctionCall: &genai.FunctionCall{Name: "f", WillContinue: boolp(true), PartialArgs: []*genai.PartialArg{{JsonPath: p, StringValue: "v"}}}},
			}}}}})
		}
		_ = acc.Add(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{}},
		}}}}})
		acc.Response()
	})
}
