package mcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/prompt"
)

// TestEverythingServer runs the connector against the reference
// "everything" server (Node), over stdio and streamable HTTP. It skips when
// the peers are not installed (see package peers).
func TestEverythingServer(t *testing.T) {
	cases := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"stdio", func(t *testing.T) string {
			node, args := peers.EverythingStdio(t)
			return (&StdioCommand{Path: node, Args: args}).String()
		}},
		{"http", func(t *testing.T) string {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return peers.EverythingHTTP(t, ctx)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			resourcesChanged := make(chan struct{}, 10)
			r := start(t, url, false, OptTimeouts(Timeouts{Connect: time.Minute}), OptOnResourceListChanged(func(context.Context) {
				resourcesChanged <- struct{}{}
			}))
			ctx := context.Background()
			if st := r.State(); st.Name == "" || st.ProtocolVersion == "" {
				t.Errorf("state = %+v", st)
			}
			var names []string
			for _, tl := range mustList(r.ListTools(ctx)) {
				names = append(names, tl.Name())
				if _, err := tl.InputSchema(); err != nil {
					t.Errorf("tool %s: %v", tl.Name(), err)
				}
			}
			for _, want := range []string{"echo", "trigger-long-running-operation", "gzip-file-as-resource", "get-tiny-image"} {
				if !slices.Contains(names, want) {
					t.Errorf("tool %q missing from %q", want, names)
				}
			}

			out, err := call(t, ctx, r.Connector, "echo", `{"message":"hello peer"}`)
			mustNotErr(t, err)
			if got := read(t, out); !strings.Contains(got, "hello peer") {
				t.Errorf("echo = %q", got)
			}
			img, err := call(t, ctx, r.Connector, "get-tiny-image", `{}`)
			mustNotErr(t, err)
			if img.Type() != typeJSON { // text and image: the content array
				t.Errorf("tiny image result type %q", img.Type())
			}

			// Progress reaches the caller's session while the call runs.
			sess := newTestSession("p")
			pctx := toolkit.ContextWithSession(ctx, sess)
			_, err = call(t, pctx, r.Connector, "trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
			mustNotErr(t, err)
			if n := len(sess.progress()); n < 2 {
				t.Errorf("%d progress notifications, want at least 2", n)
			}

			// A text resource.
			var text toolkit.Resource
			for _, res := range mustList(r.ListResources(ctx)) {
				if strings.HasPrefix(res.Type(), "text/") {
					text = res
					break
				}
			}
			if text == nil {
				t.Fatal("no text resource listed")
			}
			if read(t, text) == "" {
				t.Errorf("%s is empty", text.URI())
			}

			// A prompt.
			var simple prompt.Prompt
			for _, p := range mustList(r.ListPrompts(ctx)) {
				if p.Name() == "simple-prompt" {
					simple = p
				}
			}
			if simple == nil {
				t.Fatal("no simple-prompt")
			}
			rendered, err := simple.(prompt.Renderer).Render(ctx, nil)
			mustNotErr(t, err)
			if len(rendered.Messages) == 0 || read(t, rendered.Messages[0].Content) == "" {
				t.Errorf("rendered = %+v", rendered)
			}

			// A binary resource made by a tool: the server's resource list
			// changes, and the link reads the gzip bytes.
			link, err := call(t, ctx, r.Connector, "gzip-file-as-resource",
				`{"name":"hello.gz","data":"data:text/plain;base64,aGVsbG8gZ3ppcA==","outputType":"resourceLink"}`)
			mustNotErr(t, err)
			if link.Type() != "application/gzip" {
				t.Errorf("link type %q", link.Type())
			}
			zr, err := gzip.NewReader(bytes.NewReader([]byte(read(t, link))))
			mustNotErr(t, err)
			plain, err := io.ReadAll(zr)
			mustNotErr(t, err)
			if string(plain) != "hello gzip" {
				t.Errorf("gunzipped %q", plain)
			}
			select {
			case <-resourcesChanged:
			case <-time.After(waitLimit):
				t.Fatal("no resource list change")
			}
			found := false
			for _, res := range mustList(r.ListResources(ctx)) {
				found = found || res.URI() == link.URI()
			}
			if !found {
				t.Errorf("%s not listed after the change", link.URI())
			}
		})
	}
}
