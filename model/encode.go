package model

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/schemaguard"
)

// Format is a provider's wire format for function tools.
type Format string

// Supported formats.
const (
	// OpenAIChat is the Chat Completions API:
	// {"type":"function","function":{"name","description","parameters","strict"}}.
	OpenAIChat Format = "openai-chat"
	// OpenAIResponses is the Responses API:
	// {"type":"function","name","description","parameters","strict"}.
	OpenAIResponses Format = "openai-responses"
	// Anthropic is the Messages API: {"name","description","input_schema"},
	// and "defer_loading": true for a Deferred definition.
	Anthropic Format = "anthropic"
	// Gemini is the Gemini API: one {"functionDeclarations":[...]} tool
	// whose declarations are {"name","description","parameters"} with
	// parameters in Gemini's OpenAPI-subset schema (left out for functions
	// without parameters).
	Gemini Format = "gemini"
)

// Both OpenAI formats always carry "strict", false included. The
// Responses API defaults it to true, so leaving it out would make every
// schema that does not qualify for strict mode (most of them) a 400. Chat
// Completions defaults it to false, so there the explicit false changes
// nothing; it is written anyway so that both formats say the same thing
// and a request shows which mode each tool is in without knowing the
// provider's defaults.
type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type openAIChatTool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"` // always: the API defaults it to true
}

type anthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

type geminiDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type geminiTool struct {
	FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
}

// EncodeTool encodes one definition as a provider's tool object (for
// Gemini, one function declaration). The parameters are adapted to what the
// provider accepts; see Encode.
func EncodeTool(f Format, d Definition) (json.RawMessage, error) {
	if !IsModelName(d.Name) {
		return nil, fmt.Errorf("%w: tool %q: not a model-safe name", errs.ErrBadParameter, d.Name)
	}
	params := d.Parameters
	if len(params) == 0 {
		params = emptyObjectSchema
	}
	if err := schemaguard.CheckShape(params); err != nil {
		return nil, fmt.Errorf("%w: tool %q: parameters: %w", errs.ErrSchema, d.Name, err)
	}
	var v any
	switch f {
	case OpenAIChat, OpenAIResponses:
		p, err := adaptOpenAI(params)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		fn := openAIFunction{Name: d.Name, Description: d.Description, Parameters: p, Strict: d.Strict}
		if f == OpenAIChat {
			v = openAIChatTool{Type: "function", Function: fn}
		} else {
			v = openAIResponsesTool{Type: "function", Name: fn.Name, Description: fn.Description, Parameters: fn.Parameters, Strict: fn.Strict}
		}
	case Anthropic:
		p, err := adaptAnthropic(params)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		v = anthropicTool{Name: d.Name, Description: d.Description, InputSchema: p, DeferLoading: d.Deferred}
	case Gemini:
		p, err := adaptGemini(params)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		v = geminiDeclaration{Name: d.Name, Description: d.Description, Parameters: p}
	default:
		return nil, fmt.Errorf("%w: unknown format %q", errs.ErrBadParameter, f)
	}
	return json.Marshal(v)
}

// Encode encodes definitions as the value of the "tools" field of a
// provider's request body, in order: an array of tool objects for OpenAI and
// Anthropic, and for Gemini an array holding one tool with all function
// declarations (an empty array when there are no definitions).
//
// Schemas are adapted per provider. OpenAI and Anthropic: the root is made
// a plain object schema ("type":"object", "properties" present; root
// allOf/anyOf/oneOf folded in, root enum/const/not dropped), everything
// below is passed through. Gemini: $schema, $id, additionalProperties,
// titles (used as the description when there is none) and every keyword
// outside Gemini's subset are dropped; local $refs are inlined (recursive
// ones MaxRefDepth deep, then cut to a bare typed schema, as every $ref is
// once the schema has 20,000 nodes, and every node 100 levels deep,
// $refs inlined included); allOf branches
// are merged; oneOf becomes anyOf; a {"type":"null"} branch or a "null" in
// a type array becomes "nullable"; other type arrays become anyOf; const
// becomes a one-value enum; an enum of strings stays on a STRING or untyped
// node (a null among its values makes the node nullable), any other enum
// is dropped and its values listed in the description ("Allowed values:
// 1, 2, 3."); every node gets a type or anyOf, as Gemini requires: an
// untyped enum's values type it (INTEGER when every number is whole,
// NUMBER, BOOLEAN, ARRAY, OBJECT; for values of several types an anyOf
// with a branch per type, the STRING branch keeping the strings as its
// enum), else the keywords it uses (properties and the other object
// keywords make an OBJECT, items and the other array keywords an ARRAY,
// minLength, maxLength and pattern a STRING, minimum and maximum a
// NUMBER, a format or a default or example value its type), and a node
// that says nothing of its type ({}, true, a dangling $ref) is a STRING;
// formats Gemini does not know for the node's type are dropped, and so are
// string keywords on other types, minimum and maximum on non-numbers, and
// keyword values of the wrong JSON type; types are upper-cased; required names that are not properties
// are dropped; examples become one example; a tuple (items as a list, or
// prefixItems) becomes an array of its first position's schema;
// properties, required and the other object keywords are kept only on
// OBJECT nodes (those of a node with several types or anyOf branches are
// moved into its object branches), and never as an empty "properties": a
// free-form object stays a bare OBJECT, with the type of its values, when
// known, in its description; items and the other array keywords are kept
// only on ARRAY nodes, and every ARRAY has items (of type STRING when none
// is given); a function without parameters has none.
//
// Parameters are untrusted: their JSON may be at most 1 MiB and nest
// about 170 levels (twice the 64 levels of subschemas the toolkit accepts,
// and the values they hold), or the definition is an error wrapping
// ErrSchema and ErrBadParameter. Every adaptation is bounded in work and
// depth whatever the schema holds ($ref cycles included: NewDefinition
// refuses them, but a Definition may be made by hand).
//
// A definition that cannot be encoded is left out and reported in the
// returned error (joined, one per definition); the others are encoded. An
// unknown format is an error wrapping ErrBadParameter.
func Encode(f Format, defs []Definition) (json.RawMessage, error) {
	switch f {
	case OpenAIChat, OpenAIResponses, Anthropic, Gemini:
	default:
		return nil, fmt.Errorf("%w: unknown format %q", errs.ErrBadParameter, f)
	}
	var errList []error
	items := make([]json.RawMessage, 0, len(defs))
	for _, d := range defs {
		b, err := EncodeTool(f, d)
		if err != nil {
			errList = append(errList, err)
			continue
		}
		items = append(items, b)
	}
	var out any = items
	if f == Gemini {
		out = []geminiTool{}
		if len(items) > 0 {
			out = []geminiTool{{FunctionDeclarations: items}}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return b, errors.Join(errList...)
}
