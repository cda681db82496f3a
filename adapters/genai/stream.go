package genai

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"
)

// Accumulator merges the chunks of a streamed response
// (client.Models.GenerateContentStream) into the response that would have
// come whole, so that a streaming loop runs the model's function calls and
// keeps its turn in the history like a non-streaming one:
//
//	var acc tkgenai.Accumulator // this package, imported as tkgenai
//	for chunk, err := range client.Models.GenerateContentStream(ctx, model, contents, config) {
//		if err != nil { ... }
//		if err := acc.Add(chunk); err != nil { ... }
//		// show chunk.Text() as it comes
//	}
//	resp := acc.Response()
//	contents = append(contents, resp.Candidates[0].Content)
//	if reply, ok := tools.Run(ctx, resp); ok {
//		contents = append(contents, reply) // and ask again
//	}
//
// Per candidate, text parts that follow each other are joined (thoughts
// apart from answers, and never across a part that carries a thought
// signature, which stays on its own part); other parts are kept as they
// came, in order. A function call is kept whole when it comes whole, as
// the Gemini API sends it; a call streamed in pieces (Vertex AI's streamed
// function call arguments: FunctionCall.WillContinue, with
// FunctionCall.PartialArgs naming each argument by its JSON path) becomes
// one call whose Args hold every piece, string pieces joined, once its
// last piece has come. The response's finish reason, usage and other
// metadata are those of the last chunk that has them.
//
// The zero Accumulator is ready. It is not safe for concurrent use.
type Accumulator struct {
	cands []*candidate
	resp  genai.GenerateContentResponse // metadata of the chunks so far
}

// candidate is the merged state of one candidate.
type candidate struct {
	c       genai.Candidate
	parts   []*genai.Part
	pending *pendingCall
}

// pendingCall is a function call whose pieces are still coming.
type pendingCall struct {
	part *genai.Part // the call's first piece: id, name, signature
	args map[string]any
	// open is the path of a string argument whose value is still coming,
	// and its pieces so far.
	open   string
	pieces []string
}

// Add merges one chunk. It returns an error when a function call's
// streamed arguments cannot be merged (a malformed JSON path, a path that
// contradicts an earlier one): that call is dropped, and the rest of the
// chunk and the chunks that follow are merged as usual.
func (a *Accumulator) Add(chunk *genai.GenerateContentResponse) error {
	if chunk == nil {
		return nil
	}
	var errs []error
	for _, c := range chunk.Candidates {
		if c == nil {
			continue
		}
		i := slices.IndexFunc(a.cands, func(x *candidate) bool { return x.c.Index == c.Index })
		if i < 0 {
			i = len(a.cands)
			a.cands = append(a.cands, &candidate{})
		}
		if err := a.cands[i].add(c); err != nil {
			errs = append(errs, fmt.Errorf("genai: candidate %d: %w", c.Index, err))
		}
	}
	if chunk.UsageMetadata != nil {
		a.resp.UsageMetadata = chunk.UsageMetadata
	}
	if chunk.PromptFeedback != nil {
		a.resp.PromptFeedback = chunk.PromptFeedback
	}
	if chunk.ModelVersion != "" {
		a.resp.ModelVersion = chunk.ModelVersion
	}
	if chunk.ResponseID != "" {
		a.resp.ResponseID = chunk.ResponseID
	}
	if !chunk.CreateTime.IsZero() {
		a.resp.CreateTime = chunk.CreateTime
	}
	if chunk.SDKHTTPResponse != nil {
		a.resp.SDKHTTPResponse = chunk.SDKHTTPResponse
	}
	return errors.Join(errs...)
}

// add merges one chunk's candidate into c.
func (c *candidate) add(in *genai.Candidate) error {
	var errs []error
	if in.Content != nil {
		if in.Content.Role != "" {
			c.c.Content = &genai.Content{Role: in.Content.Role}
		}
		for _, p := range in.Content.Parts {
			if p == nil {
				continue
			}
			if err := c.addPart(p); err != nil {
				c.pending = nil // the call is lost; what follows is not
				errs = append(errs, err)
			}
		}
	}
	c.c.Index = in.Index
	if in.FinishReason != "" {
		c.c.FinishReason = in.FinishReason
	}
	if in.FinishMessage != "" {
		c.c.FinishMessage = in.FinishMessage
	}
	if in.SafetyRatings != nil {
		c.c.SafetyRatings = in.SafetyRatings
	}
	if in.CitationMetadata != nil {
		c.c.CitationMetadata = in.CitationMetadata
	}
	if in.GroundingMetadata != nil {
		c.c.GroundingMetadata = in.GroundingMetadata
	}
	if in.URLContextMetadata != nil {
		c.c.URLContextMetadata = in.URLContextMetadata
	}
	if in.TokenCount != 0 {
		c.c.TokenCount = in.TokenCount
	}
	return errors.Join(errs...)
}

func (c *candidate) addPart(p *genai.Part) error {
	if fc := p.FunctionCall; fc != nil && (c.pending != nil || streamed(fc)) {
		return c.addPiece(p)
	}
	if isText(p) && len(c.parts) > 0 {
		last := c.parts[len(c.parts)-1]
		if isText(last) && last.Thought == p.Thought && last.ThoughtSignature == nil && p.ThoughtSignature == nil {
			merged := *last
			merged.Text += p.Text
			c.parts[len(c.parts)-1] = &merged
			return nil
		}
	}
	c.parts = append(c.parts, p)
	return nil
}

// streamed reports whether fc is a piece of a call streamed in pieces.
func streamed(fc *genai.FunctionCall) bool {
	return fc.WillContinue != nil && *fc.WillContinue || len(fc.PartialArgs) > 0
}

// isText reports whether p is a plain text part.
func isText(p *genai.Part) bool {
	return p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil && p.FileData == nil &&
		p.ExecutableCode == nil && p.CodeExecutionResult == nil && p.ToolCall == nil && p.ToolResponse == nil &&
		p.VideoMetadata == nil && p.PartMetadata == nil
}

// addPiece merges one piece of a streamed function call.
func (c *candidate) addPiece(p *genai.Part) error {
	fc := p.FunctionCall
	pc := c.pending
	if pc == nil {
		pc = &pendingCall{part: p, args: map[string]any{}}
		c.pending = pc
	} else if pc.part.ThoughtSignature == nil && p.ThoughtSignature != nil {
		first := *pc.part
		first.ThoughtSignature = p.ThoughtSignature
		pc.part = &first
	}
	if fc.Name != "" && pc.part.FunctionCall.Name == "" {
		first := *pc.part
		call := *first.FunctionCall
		call.Name = fc.Name
		first.FunctionCall = &call
		pc.part = &first
	}
	for k, v := range fc.Args {
		pc.args[k] = v
	}
	for _, pa := range fc.PartialArgs {
		if pa == nil {
			continue
		}
		if err := pc.addArg(pa); err != nil {
			return err
		}
	}
	if fc.WillContinue != nil && *fc.WillContinue {
		return nil
	}
	if err := pc.closeString(); err != nil {
		return err
	}
	done := *pc.part
	done.FunctionCall = &genai.FunctionCall{ID: pc.part.FunctionCall.ID, Name: pc.part.FunctionCall.Name, Args: pc.args}
	if done.FunctionCall.ID == "" {
		done.FunctionCall.ID = fc.ID
	}
	c.parts = append(c.parts, &done)
	c.pending = nil
	return nil
}

// addArg merges one streamed argument value.
func (pc *pendingCall) addArg(pa *genai.PartialArg) error {
	if pc.open != "" && pa.JsonPath != pc.open {
		if err := pc.closeString(); err != nil {
			return err
		}
	}
	var v any
	switch {
	case pa.NumberValue != nil:
		v = *pa.NumberValue
	case pa.BoolValue != nil:
		v = *pa.BoolValue
	case pa.NULLValue != "":
		v = nil
	default:
		pc.open = pa.JsonPath
		pc.pieces = append(pc.pieces, pa.StringValue)
		if pa.WillContinue != nil && *pa.WillContinue {
			return nil
		}
		return pc.closeString()
	}
	return setPath(pc.args, pa.JsonPath, v)
}

// closeString sets the string argument whose pieces have all come.
func (pc *pendingCall) closeString() error {
	if pc.open == "" {
		return nil
	}
	path, value := pc.open, strings.Join(pc.pieces, "")
	pc.open, pc.pieces = "", nil
	return setPath(pc.args, path, value)
}

// Response returns the response merged so far: one candidate per
// candidate index seen, in order of index, each with its merged content.
// A function call whose last piece has not come yet is left out. The
// response is a new value each time; its parts are shared with the
// chunks.
func (a *Accumulator) Response() *genai.GenerateContentResponse {
	resp := a.resp
	cands := slices.Clone(a.cands)
	slices.SortStableFunc(cands, func(x, y *candidate) int { return int(x.c.Index) - int(y.c.Index) })
	for _, c := range cands {
		out := c.c
		role := genai.RoleModel
		if c.c.Content != nil && c.c.Content.Role != "" {
			role = c.c.Content.Role
		}
		out.Content = &genai.Content{Role: role, Parts: slices.Clone(c.parts)}
		resp.Candidates = append(resp.Candidates, &out)
	}
	return &resp
}

// ErrStreamedArgument is wrapped by the errors of Accumulator.Add about a
// function call's streamed arguments: a malformed JSON path, or a path
// that contradicts an earlier one.
var ErrStreamedArgument = errors.New("genai: bad streamed function call argument")
