package mcp

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// A server lists two good tools beside schema bombs: $ref cycles, schemas
// 5,000 levels deep, a huge enum, 5,000 properties, definitions that
// multiply. Each bomb is refused alone and named, with its reason, in the
// listing's warning; the good tools are listed and callable; the
// connector connects once and never reconnects; a call of a bomb by name
// finds nothing, and the process survives. Before, the first call of a
// $ref cycle overflowed the stack, and the deep schemas failed the whole
// listing (the go-sdk decodes no message nested past 1,000 levels), so the
// connector reconnected for ever.
func TestSchemaBombs(t *testing.T) {
	cases := []struct {
		name string
		url  func(t *testing.T) (string, []Option)
	}{
		{"memory", func(t *testing.T) (string, []Option) {
			raw := &testserver.Raw{Handle: testserver.SchemaBombHandler("bombs")}
			t.Cleanup(raw.Close)
			return "memory://bombs", []Option{OptDialer(raw.Dial)}
		}},
		{"stdio", func(t *testing.T) (string, []Option) {
			requireUnix(t)
			exe, err := os.Executable()
			mustNotErr(t, err)
			return (&StdioCommand{Path: exe, Env: []string{testserver.HostileEnv + "=" + testserver.HostileSchemaBombs}}).String(), nil
		}},
	}
	for _, mode := range []struct {
		name string
		mode testserver.Mode
	}{{"stateful", testserver.Stateful}, {"stateless", testserver.Stateless}, {"sse", testserver.SSE}} {
		cases = append(cases, struct {
			name string
			url  func(t *testing.T) (string, []Option)
		}{mode.name, func(t *testing.T) (string, []Option) {
			h := testserver.ServeHTTP(t, testserver.SchemaBombServer("bombs"), mode.mode)
			if mode.mode == testserver.SSE {
				return h.SSEURL, nil
			}
			return h.URL, nil
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			url, opts := tc.url(t)
			logs := newLogCapture()
			events := newEventLog()
			d := newHookDelegate(events, append(opts, OptLogger(slogNew(logs)), fastBackoff)...)
			tk, err := toolkit.New(toolkit.WithDelegate(d))
			mustNotErr(t, err)
			mustNotErr(t, tk.AddConnectorNS("bombs", url))
			runToolkit(t, tk)
			events.wait(t, toolkit.ConnectorEventToolListChanged, "bombs")
			ctx := context.Background()

			resp, err := tk.List(ctx, toolkit.ListRequest{Namespace: "bombs"})
			mustNotErr(t, err)
			var names []string
			for _, it := range resp.Tools {
				names = append(names, it.Name())
			}
			if !slices.Equal(names, testserver.SchemaBombGood) {
				t.Errorf("tools %q, want %q", names, testserver.SchemaBombGood)
			}
			for _, b := range testserver.SchemaBombs() {
				logs.waitFor(t, "skipping remote items", `"`+b.Name+`": input schema: `, b.Why)
			}

			out, err := tk.Call(ctx, "bombs.good", jsonInput(`{"text":"hi"}`))
			mustNotErr(t, err)
			if got := read(t, out); got != "ok hi" {
				t.Errorf("good: %q", got)
			}
			_, err = tk.Call(ctx, "bombs.tree", jsonInput(`{"name":"root","children":[{"name":"leaf","children":[]}]}`))
			mustNotErr(t, err)
			for _, b := range testserver.SchemaBombs() {
				if _, err := tk.Call(ctx, "bombs."+b.Name, jsonInput(`{}`)); !errors.Is(err, toolkit.ErrNotFound) {
					t.Errorf("calling %s: %v", b.Name, err)
				}
			}

			connected := 0
			for _, rec := range logs.all() {
				if strings.Contains(rec, "connection attempt failed") || strings.Contains(rec, "connection lost") {
					t.Errorf("the connector lost its session: %s", rec)
				}
				if strings.Contains(rec, "INFO connected") {
					connected++
				}
			}
			if connected != 1 {
				t.Errorf("connected %d times, want 1", connected)
			}
		})
	}
}
