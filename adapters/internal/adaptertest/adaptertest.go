// Package adaptertest builds the toolkit the adapters' tests hand to a
// fake provider: builtin tools and a remote MCP server served in memory.
package adaptertest

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// WaitLimit bounds every wait: reaching it is a failure (something hangs),
// not a timing assertion.
const WaitLimit = 20 * time.Second

// RemoteNS is the namespace of the remote server; RemoteTool is the name
// of its tool, which is not a model-safe name (it has a '.'), so the model
// sees a hashed name that the adapters must map back.
const (
	RemoteNS       = "kb"
	RemoteTool     = "docs.search"
	RemoteSnapshot = "snapshot"
)

// WeatherIn is the input of the builtin get_weather tool.
type WeatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

// SearchIn is the input of the remote tool.
type SearchIn struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

// Builtins returns the builtin tools: get_weather (text), render_chart (a
// PNG image), get_forecast (JSON) and explode (always fails).
func Builtins() []toolkit.Tool {
	return []toolkit.Tool{
		tool.Must("get_weather", "Current weather for a city.",
			func(_ context.Context, in WeatherIn) (string, error) {
				return "Sunny in " + in.City, nil
			}, tool.WithReadOnly(true)),
		tool.Must("render_chart", "Renders a chart as a PNG image.",
			func(_ context.Context, _ struct{}) (toolkit.Resource, error) {
				return resource.Blob("chart", "image/png", PNG())
			}),
		tool.Must("get_forecast", "Forecast for a city, as JSON.",
			func(_ context.Context, in WeatherIn) (map[string]any, error) {
				return map[string]any{"city": in.City, "high": 21}, nil
			}),
		tool.Must("explode", "Always fails.",
			func(_ context.Context, _ struct{}) (string, error) {
				return "", errors.New("boom")
			}),
	}
}

// PNG returns a small PNG image.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// NewRemote returns the MCP server of namespace RemoteNS: RemoteTool
// answers "found: QUERY"; RemoteSnapshot answers with a text and a PNG
// image.
func NewRemote() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "kb", Version: "1.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: RemoteTool, Description: "Searches the documentation."},
		func(_ context.Context, _ *sdk.CallToolRequest, in SearchIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found: " + in.Query}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: RemoteSnapshot, Description: "Shows the documentation's chart."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "the chart:"},
				&sdk.ImageContent{MIMEType: "image/png", Data: PNG()},
			}}, nil, nil
		})
	return s
}

// Toolkit returns a running toolkit with Builtins and the remote server
// (served in memory through mcp.OptDialer) ready. It stops when the test
// ends.
func Toolkit(t testing.TB) *toolkit.Toolkit {
	t.Helper()
	srv := NewRemote()
	dial := func(ctx context.Context) (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	changed := make(chan struct{}, 1)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := mcp.NewDelegate("adaptertest", "1.0", mcp.OptDialer(dial), mcp.OptLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	d.Events = func(toolkit.ConnectorEvent) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	tk, err := toolkit.New(toolkit.WithDelegate(d), toolkit.WithLogger(quiet), toolkit.WithTool(Builtins()...))
	if err != nil {
		t.Fatal(err)
	}
	Run(t, tk)
	if err := tk.AddConnectorNS(RemoteNS, "http://kb.invalid/mcp"); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, tk, changed, RemoteNS+"."+RemoteTool)
	return tk
}

// Run runs tk until the test ends.
func Run(t testing.TB, tk *toolkit.Toolkit) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("toolkit Run: %v", err)
				}
			case <-time.After(WaitLimit):
				t.Error("toolkit Run did not return")
			}
		})
	})
}

// WaitFor waits until key can be looked up in tk, checking again each time
// changed fires.
func WaitFor(t testing.TB, tk *toolkit.Toolkit, changed <-chan struct{}, key string) {
	t.Helper()
	deadline := time.After(WaitLimit)
	for {
		if _, err := tk.LookupItem(context.Background(), key); err == nil {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s never appeared", key)
		}
	}
}

// Many returns n builtin tools with a small schema each, for benchmarks.
func Many(n int) []toolkit.Tool {
	out := make([]toolkit.Tool, n)
	for i := range out {
		out[i] = tool.Must(name(i), "Tool number "+name(i)+" of the benchmark set.",
			func(_ context.Context, in WeatherIn) (string, error) { return in.City, nil })
	}
	return out
}

func name(i int) string {
	const digits = "0123456789"
	b := []byte("tool_0000")
	for p := len(b) - 1; p >= 5; p-- {
		b[p] = digits[i%10]
		i /= 10
	}
	return string(b)
}
