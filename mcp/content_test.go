package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// memoryConnector runs a connector on an in-memory test server.
func memoryConnector(t testing.TB, o testserver.Options, opts ...Option) (*running, *testserver.Server, *testserver.Memory) {
	t.Helper()
	s := newServer(t, o)
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	return start(t, "memory://test", false, append(opts, OptDialer(m.Dial))...), s, m
}

func TestContentMapping(t *testing.T) {
	r, _, _ := memoryConnector(t, testserver.Options{})
	mixed, _ := json.Marshal([]map[string]any{
		{"type": "text", "text": "look"},
		{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(testserver.PNG)},
	})
	tests := []struct {
		tool, input     string
		uri, mime, data string
	}{
		{"echo", `{"text":"hé"}`, "mcp://testserver/tool/echo", typeText, "hé"},
		{"structured", `{"a":1,"b":2}`, "mcp://testserver/tool/structured", typeJSON, `{"sum":3}`},
		{"image", ``, "mcp://testserver/tool/image", "image/png", string(testserver.PNG)},
		{"audio", `null`, "mcp://testserver/tool/audio", "audio/wav", string(testserver.WAV)},
		{"embedded_text", `{}`, "test://embedded/text", "text/markdown", "# embedded"},
		{"embedded_blob", `{}`, "test://embedded/blob", "application/octet-stream", string(testserver.Blob)},
		{"link", `{}`, testserver.TextURI, "text/plain", testserver.TextContent},
		{"multi_text", `{}`, "mcp://testserver/tool/multi_text", typeText, "one\ntwo"},
		{"mixed", `{}`, "mcp://testserver/tool/mixed", typeJSON, string(mixed)},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			out, err := call(t, context.Background(), r.Connector, tc.tool, tc.input)
			mustNotErr(t, err)
			if out.URI() != tc.uri || out.Type() != tc.mime {
				t.Errorf("uri, type = %q, %q; want %q, %q", out.URI(), out.Type(), tc.uri, tc.mime)
			}
			if got := read(t, out); got != tc.data && !(tc.mime == typeJSON && jsonEqual(got, tc.data)) {
				t.Errorf("content = %q, want %q", got, tc.data)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		out, err := findTool(t, r.Connector, "empty").Run(context.Background(), nil)
		if out != nil || err != nil {
			t.Errorf("empty = %v, %v; want nil, nil", out, err)
		}
	})
}

func TestToolErrors(t *testing.T) {
	r, _, _ := memoryConnector(t, testserver.Options{})
	ctx := context.Background()
	_, err := call(t, ctx, r.Connector, "fail", `{}`)
	if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), "it broke") || !strings.Contains(err.Error(), `"fail"`) {
		t.Errorf("fail: %v", err)
	}
	for _, in := range []string{`[1]`, `"x"`, `{bad`, `3`} {
		if _, err := call(t, ctx, r.Connector, "echo", in); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("echo(%s): %v, want ErrBadParameter", in, err)
		}
	}
}

func TestRemoteItems(t *testing.T) {
	r, _, _ := memoryConnector(t, testserver.Options{PageSize: 2})
	ctx := context.Background()
	tools, _ := r.ListTools(ctx)
	if len(tools) < 15 {
		t.Fatalf("%d tools listed over pages of 2", len(tools))
	}
	echo := findTool(t, r.Connector, "echo")
	m := echo.Meta()
	if m.Title != "Echo" || !m.ReadOnlyHint || !m.IdempotentHint || m.OpenWorldHint == nil || *m.OpenWorldHint || m.DestructiveHint != nil {
		t.Errorf("echo meta = %+v", m)
	}
	in, err := echo.InputSchema()
	if err != nil || in.Type != "object" || in.Properties["text"] == nil || len(in.Required) != 1 {
		t.Errorf("echo schema = %+v, %v", in, err)
	}
	if echo.Description() != "returns its text" {
		t.Errorf("description = %q", echo.Description())
	}

	prompts, _ := r.ListPrompts(ctx)
	p := prompts[0].(*remotePrompt)
	if p.Title() != "Greeting" || p.Description() != "greets someone" {
		t.Errorf("prompt = %q, %q", p.Title(), p.Description())
	}
	ps, _ := p.InputSchema()
	if ps.Properties["name"].Type != "string" || len(ps.Required) != 1 || ps.Required[0] != "name" {
		t.Errorf("prompt schema = %+v", ps)
	}
	rendered, err := p.Render(ctx, []byte(`{"name":"Ada","style":3}`))
	mustNotErr(t, err)
	if rendered.Description != "a greeting" || len(rendered.Messages) != 2 {
		t.Fatalf("rendered = %+v", rendered)
	}
	if rendered.Messages[0].Role != "user" || read(t, rendered.Messages[0].Content) != "Hello Ada (3)" {
		t.Errorf("first message = %+v", rendered.Messages[0])
	}
	if rendered.Messages[1].Role != "assistant" || read(t, rendered.Messages[1].Content) != "Hi!" {
		t.Errorf("second message = %+v", rendered.Messages[1])
	}
	if _, err := p.Render(ctx, []byte(`[1]`)); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("render with an array: %v", err)
	}

	res, _ := r.ListResources(ctx)
	byURI := map[string]toolkit.Resource{}
	for _, x := range res {
		byURI[x.URI()] = x
	}
	txt, blob := byURI[testserver.TextURI], byURI[testserver.BlobURI]
	if txt == nil || blob == nil {
		t.Fatalf("resources = %v", res)
	}
	if txt.Name() != "text" || txt.Type() != "text/plain" || txt.Description() != "a text" || read(t, txt) != testserver.TextContent {
		t.Errorf("text resource = %q %q %q", txt.Name(), txt.Type(), txt.Description())
	}
	if blob.Type() != "application/octet-stream" || read(t, blob) != string(testserver.Blob) {
		t.Errorf("blob resource = %q", blob.Type())
	}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
