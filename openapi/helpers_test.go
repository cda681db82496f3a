package openapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/openapi"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testdata returns the path of a pinned document, gunzipped into a
// temporary directory when it is compressed.
func testdata(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("testdata", name)
	if filepath.Ext(name) != ".gz" {
		return p
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name[:len(name)-3])
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, zr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeDoc writes a document into a temporary file.
func writeDoc(t testing.TB, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// load makes a connector for cfg and loads its document.
func load(t testing.TB, cfg openapi.Config) (*openapi.Connector, error) {
	t.Helper()
	c, err := openapi.New(cfg, nil)
	if err != nil {
		return nil, err
	}
	return c, c.Reload(context.Background())
}

// mustTools loads cfg and returns its tools by name.
func mustTools(t testing.TB, cfg openapi.Config) map[string]toolkit.Tool {
	t.Helper()
	c, err := load(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]toolkit.Tool{}
	for _, tl := range tools {
		if _, dup := out[tl.Name()]; dup {
			t.Fatalf("tool name %q twice", tl.Name())
		}
		out[tl.Name()] = tl
	}
	return out
}

// schemaJSON returns a tool's input (or output) schema as a map.
func schemaJSON(t testing.TB, tl toolkit.Tool, output bool) map[string]any {
	t.Helper()
	get := tl.InputSchema
	if output {
		get = tl.OutputSchema
	}
	s, err := get()
	if err != nil {
		t.Fatalf("%s: %v", tl.Name(), err)
	}
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// delegate makes openapi connectors for the toolkit, by URL.
type delegate struct{ cfgs map[string]openapi.Config }

func (d *delegate) OnEvent(toolkit.ConnectorEvent) {}

func (d *delegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}

func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	cfg, ok := d.cfgs[url]
	if !ok {
		return nil, toolkit.ErrNotFound
	}
	return openapi.New(cfg, onEvent)
}

// runToolkit runs a toolkit with the connector of cfg under ns and waits
// until it is ready.
func runToolkit(t testing.TB, ns string, cfg openapi.Config) (*toolkit.Toolkit, func()) {
	t.Helper()
	tk, err := toolkit.New(toolkit.WithDelegate(&delegate{cfgs: map[string]openapi.Config{"openapi:" + ns: cfg}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddConnectorNS(ns, "openapi:"+ns); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	states, err := tk.WaitConnectors(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if states[0].Status != toolkit.StatusReady {
		t.Fatalf("connector: %+v", states[0])
	}
	return tk, func() { cancel(); <-done }
}
