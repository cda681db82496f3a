package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// postInput posts a tools/call of up_ask_user as a raw 2026-07-28 client
// to url, with the requestState and the answer when state is not empty.
func postInput(t *testing.T, url, state string) (int, string) {
	t.Helper()
	extra := ""
	if state != "" {
		extra = fmt.Sprintf(`"requestState":%q,"inputResponses":{"u":{"action":"accept","content":{"name":"Ada"}}},`, state)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up_ask_user","arguments":{},%s`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`, extra)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "up_ask_user"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var stateRE = regexp.MustCompile(`"requestState":"([^"]+)"`)

// Gateways given the same input_state keys take each other's relayed
// input rounds: an upstream's input-required result asked through one is
// answered through the other; a gateway with a key of its own refuses the
// retry as not issued by it.
func TestGatewayInputStateShared(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "ask_user", InputSchema: &jsonschema.Schema{Type: "object"}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, ok := req.Params.InputResponses["u"].(*sdk.ElicitResult)
		if !ok || req.Params.RequestState != "upstream-state" {
			return &sdk.CallToolResult{RequestState: "upstream-state", InputRequests: sdk.InputRequestMap{"u": &sdk.ElicitParams{Message: "name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("user: ", a.Content["name"])}}}, nil
	})
	up := testserver.ServeHTTP(t, s, testserver.Stateless)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	gateway := func(keys string) *gatewayProcess {
		dir := t.TempDir()
		state := ""
		if keys != "" {
			if err := os.WriteFile(filepath.Join(dir, "keys"), []byte(keys+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			state = "input_state: {keys_file: keys}\n"
		}
		g := startGateway(t, writeConfig(t, dir, fmt.Sprintf("listen: 127.0.0.1:0\nqualified_names: true\n%sservers:\n  - name: up\n    url: %s\n", state, up.URL)))
		g.waitLog(t, 0, upstreamReady("up"))
		return g
	}
	a, b := gateway(key), gateway(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 16))+"\n"+key)
	c := gateway("")
	ask := func() string {
		t.Helper()
		status, body := postInput(t, a.mcpURL, "")
		m := stateRE.FindStringSubmatch(body)
		if status != 200 || m == nil || !strings.Contains(body, `"u":{"method":"elicitation/create"`) {
			t.Fatalf("first round: %d %s", status, body)
		}
		return m[1]
	}
	if status, body := postInput(t, b.mcpURL, ask()); status != 200 || !strings.Contains(body, "user: Ada") {
		t.Errorf("the retry on the gateway sharing the key: %d %s", status, body)
	}
	if status, body := postInput(t, c.mcpURL, ask()); status != 400 || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "not issued by this server") {
		t.Errorf("the retry on a gateway without the key: %d %s", status, body)
	}
}
