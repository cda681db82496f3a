//go:build unix

package main

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayStdioColdStart checks that a one-shot stdio client, which
// lists once right after initialize, sees the upstream's tools: the
// gateway holds the first list until the upstream is ready (startup_wait).
func TestGatewayStdioColdStart(t *testing.T) {
	bin := exampleProgram(t)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
transport: stdio
startup_wait: %s
servers:
  - name: local
    command: [%q, mcp-server]
    tools: {allow: [who*]}
`, waitLimit, bin))
	cmd := exec.Command(gatewayProgram(t), "serve", "--config", config, "--log-level", "warn")
	cmd.Env = environWithout("OPENAI_")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "one-shot", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if names := toolNames(t, cs); !slices.Equal(names, []string{"whoami"}) {
		t.Errorf("first tools/list = %v, want [whoami]\n%s", names, stderr.String())
	}
}
