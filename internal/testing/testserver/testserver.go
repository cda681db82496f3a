// Package testserver provides MCP servers for tests: a go-sdk server with a
// fixed catalogue covering every kind of content, ways to serve it in
// memory, over loopback HTTP (streamable, stateful or stateless, and the
// legacy SSE transport) and on stdio, with faults on demand, and a raw
// line-based server that can answer anything at all.
package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Contents of the fixed catalogue.
var (
	// PNG is the image the "image" tool returns (a 1x1 PNG).
	PNG = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89}
	// WAV is the sound the "audio" tool returns.
	WAV = []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	// Blob is the content of the binary resource test://blob.
	Blob = []byte{0, 1, 2, 3, 0xfe, 0xff}
)

// Resource URIs of the fixed catalogue.
const (
	TextURI = "test://text"
	BlobURI = "test://blob"
	// TextContent is the content of TextURI.
	TextContent = "hello from a text resource"
)

// Server is a go-sdk server with the fixed catalogue and hooks for tests.
type Server struct {
	*sdk.Server

	// Started receives the tag of each "block" call once it runs.
	Started chan string
	// Cancelled receives the tag of each "block" call whose context was
	// cancelled.
	Cancelled chan string
	// Release lets one "progress" or "log" call given "hold": true return.
	Release chan struct{}

	mu       sync.Mutex
	meetings map[string]*meeting
	quit     chan struct{}
	quitOnce sync.Once
}

// Close ends every call still waiting in "block", "progress" or "log" (a
// killed HTTP server leaves its handlers running).
func (s *Server) Close() { s.quitOnce.Do(func() { close(s.quit) }) }

type meeting struct {
	n    int
	ch   chan struct{}
	seen int
}

// Options configure New.
type Options struct {
	// Name is the server's name (default "testserver").
	Name string
	// PageSize is the page size of lists (default: the SDK's).
	PageSize int
	// Server is merged into the server options (Name and PageSize win).
	Server *sdk.ServerOptions
}

// New returns a server with this catalogue:
//
// Tools: echo (text of its "text" argument), structured (structured
// content {"sum": a+b}), image (PNG, image/png), audio (WAV, audio/wav),
// embedded_text (embedded resource test://embedded/text), embedded_blob
// (embedded blob test://embedded/blob, application/octet-stream), link
// (resource link to TextURI), multi_text ("one", "two"), mixed (text and
// PNG), empty (no content), fail (isError with text "it broke"), progress
// (reports "steps" progress notifications with messages "TAG i", meeting
// the other calls with the same "meet" name first and waiting for Release
// after when "hold" is true), block (reports its
// "tag" on Started and waits for cancellation, then reports it on
// Cancelled), log (sends a warning log message with its "text", then waits for Release
// when "hold" is true), big (text of
// "size" bytes).
//
// Prompts: greet (arguments name, required, and style), returning one user
// message "Hello NAME" (in STYLE when given) and one assistant message.
//
// Resources: TextURI (text/plain) and BlobURI (application/octet-stream).
func New(o Options) *Server {
	so := &sdk.ServerOptions{}
	if o.Server != nil {
		*so = *o.Server
	}
	if o.PageSize > 0 {
		so.PageSize = o.PageSize
	}
	name := o.Name
	if name == "" {
		name = "testserver"
	}
	s := &Server{
		Server:    sdk.NewServer(&sdk.Implementation{Name: name, Version: "1.2.3", Title: "Test Server"}, so),
		Started:   make(chan string, 100),
		Cancelled: make(chan string, 100),
		Release:   make(chan struct{}),
		quit:      make(chan struct{}),
		meetings:  map[string]*meeting{},
	}
	s.addTools()
	s.addPrompts()
	s.addResources()
	return s
}

// ObjectSchema returns an object schema with the given string properties.
func ObjectSchema(props ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, p := range props {
		s.Properties[p] = &jsonschema.Schema{}
	}
	return s
}

func args(req *sdk.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func number(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func (s *Server) addTools() {
	add := func(name, desc string, h sdk.ToolHandler, props ...string) {
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: ObjectSchema(props...)}, h)
	}
	s.AddTool(&sdk.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "returns its text",
		InputSchema: &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}},
			Required:   []string{"text"},
		},
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(str(args(req), "text")), nil
	})
	add("structured", "adds a and b", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := args(req)
		sum := number(m, "a") + number(m, "b")
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(`{"sum":%v}`, sum)}},
			StructuredContent: map[string]any{"sum": sum},
		}, nil
	}, "a", "b")
	add("image", "returns a PNG", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: PNG, MIMEType: "image/png"}}}, nil
	})
	add("audio", "returns a WAV", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: WAV, MIMEType: "audio/wav"}}}, nil
	})
	add("embedded_text", "returns an embedded text resource", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: "test://embedded/text", MIMEType: "text/markdown", Text: "# embedded"}}}}, nil
	})
	add("embedded_blob", "returns an embedded blob", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: "test://embedded/blob", MIMEType: "application/octet-stream", Blob: Blob}}}}, nil
	})
	add("link", "returns a link to test://text", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: TextURI, Name: "text", MIMEType: "text/plain"}}}, nil
	})
	add("multi_text", "returns two texts", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "one"}, &sdk.TextContent{Text: "two"}}}, nil
	})
	add("mixed", "returns a text and an image", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "look"}, &sdk.ImageContent{Data: PNG, MIMEType: "image/png"}}}, nil
	})
	add("empty", "returns nothing", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{}}, nil
	})
	add("fail", "reports an error", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil
	})
	add("progress", "reports progress", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := args(req)
		tag := str(m, "tag")
		if meet := str(m, "meet"); meet != "" {
			if err := s.meet(ctx, meet, int(number(m, "parties"))); err != nil {
				return nil, err
			}
		}
		steps := int(number(m, "steps"))
		for i := 1; i <= steps; i++ {
			err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(),
				Progress:      float64(i),
				Total:         float64(steps),
				Message:       fmt.Sprintf("%s %d", tag, i),
			})
			if err != nil {
				return nil, err
			}
		}
		if err := s.hold(ctx, m); err != nil {
			return nil, err
		}
		return text("done " + tag), nil
	}, "tag", "steps", "meet", "parties", "hold")
	add("block", "waits for cancellation", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		tag := str(args(req), "tag")
		s.Started <- tag
		select {
		case <-ctx.Done():
			s.Cancelled <- tag
			return nil, ctx.Err()
		case <-s.quit:
			return nil, errors.New("server closed")
		}
	}, "tag")
	add("log", "logs its text", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		t := str(args(req), "text")
		err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "test", Data: t})
		if err != nil {
			return nil, err
		}
		if err := s.hold(ctx, args(req)); err != nil {
			return nil, err
		}
		return text("logged"), nil
	}, "text", "hold")
	add("big", "returns size bytes", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(strings.Repeat("x", int(number(args(req), "size")))), nil
	}, "size")
	add("pid", "returns the server's process id", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(fmt.Sprint(os.Getpid())), nil
	})
}

// hold waits for Release when the arguments ask for it.
func (s *Server) hold(ctx context.Context, m map[string]any) error {
	if h, _ := m["hold"].(bool); !h {
		return nil
	}
	return s.await(ctx, s.Release)
}

// meet blocks until n calls met under name.
func (s *Server) meet(ctx context.Context, name string, n int) error {
	s.mu.Lock()
	m := s.meetings[name]
	if m == nil {
		m = &meeting{n: n, ch: make(chan struct{})}
		s.meetings[name] = m
	}
	m.seen++
	if m.seen >= m.n {
		close(m.ch)
		delete(s.meetings, name)
	}
	s.mu.Unlock()
	return s.await(ctx, m.ch)
}

// await waits until ch yields (a send or its close), ctx is done or the
// server closes.
func (s *Server) await(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.quit:
		return errors.New("server closed")
	}
}

func (s *Server) addPrompts() {
	s.AddPrompt(&sdk.Prompt{
		Name:        "greet",
		Title:       "Greeting",
		Description: "greets someone",
		Arguments: []*sdk.PromptArgument{
			{Name: "name", Description: "who", Required: true},
			{Name: "style", Description: "how"},
		},
	}, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		msg := "Hello " + req.Params.Arguments["name"]
		if st := req.Params.Arguments["style"]; st != "" {
			msg += " (" + st + ")"
		}
		return &sdk.GetPromptResult{
			Description: "a greeting",
			Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: msg}},
				{Role: "assistant", Content: &sdk.TextContent{Text: "Hi!"}},
			},
		}, nil
	})
}

func (s *Server) addResources() {
	s.AddResource(&sdk.Resource{URI: TextURI, Name: "text", Description: "a text", MIMEType: "text/plain"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: TextURI, MIMEType: "text/plain", Text: TextContent}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: BlobURI, Name: "blob", Description: "some bytes", MIMEType: "application/octet-stream"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: BlobURI, MIMEType: "application/octet-stream", Blob: Blob}}}, nil
		})
}

// Flapping returns server options whose sessions close as soon as the
// client completed the handshake: a server that accepts connections and
// drops them at once.
func Flapping() *sdk.ServerOptions {
	return &sdk.ServerOptions{InitializedHandler: func(ctx context.Context, req *sdk.InitializedRequest) {
		go req.Session.Close()
	}}
}
