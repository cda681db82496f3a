package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayAuditsPromptsAndResources: the gateway's audit log holds one
// record for each prompts/get and resources/read a client sends, served
// or refused — a prompt rendered, an unknown prompt, an unknown resource,
// and a 2026-07-28 retry whose requestState is forged — with the
// refusal's reason and never the prompt's arguments.
func TestGatewayAuditsPromptsAndResources(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	greet := "---\ntitle: Greet someone\ndescription: Says hello.\ninput:\n  type: object\n  properties:\n    name: {type: string}\n  required: [name]\n---\nSay hello to {{ .name }}.\n"
	if err := os.WriteFile(filepath.Join(dir, "prompts", "greet.md"), []byte(greet), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, writeConfig(t, dir, "listen: 127.0.0.1:0\nprompts: prompts\naudit_log: {file: audit.jsonl}\n"))
	g.waitLog(t, 0, upstreamReady("user"))
	cs := connectGateway(t, g)
	ctx := context.Background()
	const secret = "Ada-the-secret"
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": secret}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "nope", Arguments: map[string]string{"name": secret}}); err == nil {
		t.Fatal("an unknown prompt was rendered")
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///nope"}); err == nil {
		t.Fatal("an unknown resource was read")
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"x"},"requestState":"forged.1",` +
		`"inputResponses":{"u":{"action":"accept","content":{}}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, g.mcpURL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/get", "Mcp-Name": "greet"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(answer), "-32602") {
		t.Fatalf("a forged requestState was not refused: %d %s", resp.StatusCode, answer)
	}
	cs.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited

	recs, raw := readAudit(t, filepath.Join(dir, "audit.jsonl"))
	if strings.Contains(raw, secret) {
		t.Fatalf("a prompt's argument reached the audit log:\n%s", raw)
	}
	var got []string
	for _, r := range recs {
		name := r["prompt"]
		if name == nil {
			name = r["uri"]
		}
		reason, _ := r["reason"].(string)
		got = append(got, fmt.Sprintf("%v|%v|%v|%v", r["msg"], name, r["outcome"], reason != ""))
	}
	want := []string{
		"prompt get|greet|ok|false",
		"prompt get|nope|not_found|false",
		"resource read|file:///nope|not_found|false",
		"prompt get|greet|bad_input|true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
