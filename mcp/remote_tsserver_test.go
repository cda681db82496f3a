package mcp

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// TestTypeScriptServer runs the connector against a server written with
// the TypeScript SDK's version 2 (tools/peers/tsserver.mjs): by default it
// negotiates 2026-07-28 through server/discover, over stdio and over
// streamable HTTP (where that SDK checks every request's Mcp-Method and
// Mcp-Name headers against its body), and the server's input-required
// results are answered by the connector's own handlers; over stdio, asked
// for StatefulProtocolVersion, it gets initialize, and the same tools
// reach it as server requests. Every way, a tool added by the server is
// announced and listed.
func TestTypeScriptServer(t *testing.T) {
	stdio := func(t *testing.T) string {
		node, args := peers.TSServerStdio(t)
		return (&StdioCommand{Path: node, Args: args}).String()
	}
	for _, tc := range []struct {
		transport string
		url       func(t *testing.T) string
		ask, want string
	}{
		{"stdio", stdio, "", StatelessProtocolVersion},
		{"stdio", stdio, StatefulProtocolVersion, StatefulProtocolVersion},
		{"http", func(t *testing.T) string { return peers.StartTSServerHTTP(t) }, "", StatelessProtocolVersion},
	} {
		t.Run(tc.transport+"/"+tc.want, func(t *testing.T) {
			url := tc.url(t)
			leakCheck(t)
			changed := make(chan struct{}, 8)
			opts := []Option{OptTimeouts(Timeouts{Connect: time.Minute}),
				OptOnToolListChanged(func(context.Context) { changed <- struct{}{} }),
				OptServerRequests(ServerRequests{Sampling: func(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
					return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "teal"}}, nil
				}}),
				OptServerRequests(ServerRequests{Elicitation: func(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				}}),
			}
			if tc.ask != "" {
				opts = append(opts, OptProtocolVersion(tc.ask))
			}
			r := start(t, url, false, opts...)
			if st := r.State(); st.Name != "ts-server" || st.ProtocolVersion != tc.want {
				t.Errorf("state %+v, want ts-server at %s", st, tc.want)
			}
			ctx := context.Background()
			for tool, want := range map[string]string{"ask_model": "model: teal", "ask_user": "user: accept Ada"} {
				out, err := call(t, ctx, r.Connector, tool, `{}`)
				if err != nil {
					t.Errorf("%s: %v", tool, err)
					continue
				}
				if got := read(t, out); got != want {
					t.Errorf("%s = %q, want %q", tool, got, want)
				}
			}
			out, err := call(t, ctx, r.Connector, "echo", `{"text":"hi"}`)
			if err != nil || read(t, out) != "hi" {
				t.Errorf("echo: %v", err)
			}
			_, err = call(t, ctx, r.Connector, "add_tool", `{}`)
			mustNotErr(t, err)
			for {
				select {
				case <-changed:
				case <-time.After(waitLimit):
					t.Fatal("no tools/list_changed")
				}
				var names []string
				for _, tl := range mustList(r.ListTools(ctx)) {
					names = append(names, tl.Name())
				}
				if slices.Contains(names, "late") {
					break
				}
			}
			mustNotErr(t, r.stop(t))
		})
	}
}
