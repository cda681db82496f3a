package main

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/prompt"
)

// serverName identifies the program to MCP clients in server mode.
const serverName = "example-server"

// serverSubcommand is the hidden subcommand that serves a small toolkit
// over stdio. The demo starts the program itself with it, so that it
// always has a real MCP server to talk to.
const serverSubcommand = "mcp-server"

// greetPrompt is the prompt served in server mode.
const greetPrompt = `---
name: greet
title: Greet someone by name
description: A friendly greeting from the example server.
input:
  type: object
  properties:
    name: {type: string, description: Who to greet.}
  required: [name]
---
Say hello to {{ .name }} on behalf of the example server, in one sentence.
`

// serveStdio serves the server-mode toolkit to one MCP client over
// standard input and output until the client closes stdin or ctx ends.
func serveStdio(ctx context.Context) error {
	greet, err := prompt.Read(strings.NewReader(greetPrompt))
	if err != nil {
		return err
	}
	tk, err := toolkit.New(
		toolkit.WithTool(serverTools()...),
		toolkit.WithPrompt(greet),
		toolkit.WithResource(serverResources()...),
	)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: serverName, Version: version})
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.ServeStdio(ctx)
}
