package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A SchemaBomb is a tool whose input schema is made to hurt whoever walks
// it: a $ref cycle, nesting thousands of levels deep, an enum or a fan-out
// far past any real schema's, definitions that multiply.
type SchemaBomb struct {
	Name string
	// Why is a part of the reason a client that refuses the tool gives.
	Why string
	// Schema is the JSON of the tool's input schema.
	Schema string
}

// nestedSchema returns an object schema with n levels of subschemas under
// kw ("properties" nests two JSON levels a level, "not" one).
func nestedSchema(kw string, n int) string {
	var open, close strings.Builder
	for range n {
		if kw == "properties" {
			open.WriteString(`{"type":"object","properties":{"a":`)
			close.WriteString(`}}`)
		} else {
			open.WriteString(`{"` + kw + `":`)
			close.WriteString(`}`)
		}
	}
	return `{"type":"object","properties":{"x":` + open.String() + `{}` + close.String() + `}}`
}

// SchemaBombs returns the schema bombs SchemaBombHandler serves.
func SchemaBombs() []SchemaBomb {
	props := make([]string, 5000)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string"}`, i)
	}
	var laughs strings.Builder
	laughs.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d30"}},"$defs":{"d0":{"type":"string"}`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&laughs, `,"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	laughs.WriteString(`}}`)
	return []SchemaBomb{
		{Name: "self_ref", Why: "$ref cycle", Schema: `{"type":"object","$ref":"#"}`},
		{Name: "mutual_ref", Why: "$ref cycle", Schema: `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`},
		{Name: "ref_into_itself", Why: "$ref cycle", Schema: `{"type":"object","properties":{"x":{"$ref":"#/properties/x"}}}`},
		{Name: "deep", Why: "levels deep", Schema: nestedSchema("properties", 5000)},
		{Name: "deep_not", Why: "levels deep", Schema: nestedSchema("not", 5000)},
		{Name: "huge_enum", Why: "enum has", Schema: `{"type":"object","properties":{"x":{"enum":[` + strings.Repeat(`1,`, 100_000) + `1]}}}`},
		{Name: "fan_out", Why: "properties has", Schema: `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`},
		{Name: "laughs", Why: "costs more than", Schema: laughs.String()},
	}
}

// SchemaBombGood are the tools SchemaBombHandler serves besides the
// bombs: "good" (answers "ok " and its "text") and "tree", whose schema
// is recursive but legitimate (its children are trees).
var SchemaBombGood = []string{"good", "tree"}

// schemaBombsPerPage is how many tools a tools/list page of
// SchemaBombHandler holds.
const schemaBombsPerPage = 4

// SchemaBombHandler returns the Handle of a Raw server named name that
// lists SchemaBombGood and SchemaBombs, schemaBombsPerPage tools a page
// (good tools first), with no prompts, resources or templates. A call of
// a good tool answers; a call of a bomb answers an error saying that it
// should never have been made.
func SchemaBombHandler(name string) func(RawRequest) [][]byte {
	tools := []string{
		`{"name":"good","description":"answers ok","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`,
		`{"name":"tree","inputSchema":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}}`,
	}
	for _, b := range SchemaBombs() {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":%s}`, b.Name, b.Schema))
	}
	return func(req RawRequest) [][]byte {
		var params struct {
			Cursor    string         `json:"cursor"`
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &params)
		switch req.Method {
		case "initialize":
			return [][]byte{Initialize(req, name)}
		case "ping":
			return [][]byte{Result(req, map[string]any{})}
		case "tools/list":
			var page int
			fmt.Sscan(params.Cursor, &page)
			page = max(page, 0)
			lo, hi := min(page*schemaBombsPerPage, len(tools)), min((page+1)*schemaBombsPerPage, len(tools))
			next := ""
			if hi < len(tools) {
				next = fmt.Sprintf(`,"nextCursor":"%d"`, page+1)
			}
			return [][]byte{RawResult(req, `{"tools":[`+strings.Join(tools[lo:hi], ",")+`]`+next+`}`)}
		case "tools/call":
			text := "ok " + fmt.Sprint(params.Arguments["text"])
			isError := params.Name != "good" && params.Name != "tree"
			if isError {
				text = "the client called schema bomb " + params.Name
			}
			return [][]byte{Result(req, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError})}
		case "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{Result(req, map[string]any{})}
		}
		if len(req.ID) > 0 {
			return [][]byte{MethodNotFound(req)}
		}
		return nil
	}
}

// SchemaBombServer returns a go-sdk server named name with the tools of
// SchemaBombHandler (the "deep" bomb 2,000 levels deep rather than 5,000:
// the JSON encoder of the SDK's server refuses 10,000). Its good tools
// answer as SchemaBombHandler's do.
func SchemaBombServer(name string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "0"}, &sdk.ServerOptions{PageSize: schemaBombsPerPage})
	answer := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if n := req.Params.Name; n != "good" && n != "tree" {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the client called schema bomb " + n}}}, nil
		}
		return text("ok " + fmt.Sprint(args["text"])), nil
	}
	s.AddTool(&sdk.Tool{Name: "good", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}, answer)
	s.AddTool(&sdk.Tool{Name: "tree", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`)}, answer)
	armed := &atomic.Bool{}
	for _, b := range SchemaBombs() {
		if b.Name == "deep" {
			b.Schema = nestedSchema("properties", 2000)
		}
		s.AddTool(&sdk.Tool{Name: b.Name, InputSchema: armedSchema{raw: json.RawMessage(b.Schema), armed: armed}}, answer)
	}
	armed.Store(true)
	return s
}

// armedSchema is an input schema that encodes as {"type":"object"} until
// armed, then as its JSON: a go-sdk server decodes the schema of a tool
// when it is added and refuses one nested past 1,000 levels, but sends
// whatever the schema encodes as afterwards.
type armedSchema struct {
	raw   json.RawMessage
	armed *atomic.Bool
}

func (a armedSchema) MarshalJSON() ([]byte, error) {
	if a.armed.Load() {
		return a.raw, nil
	}
	return []byte(`{"type":"object"}`), nil
}
