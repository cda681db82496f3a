package main

import (
	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// URIs of the static resources.
const (
	welcomeURI = "example://demo/welcome"
	aboutURI   = "example://server/about"
)

// builtinResources returns the demo's static resources.
func builtinResources() []toolkit.Resource {
	return []toolkit.Resource{
		resource.WithURI(welcomeURI, resource.WithDescription("A short welcome text",
			resource.Must("welcome", "Welcome to the toolkit demo: one surface over builtins, MCP servers and a user store.\n"))),
	}
}

// serverResources returns the resources the program serves in MCP server
// mode.
func serverResources() []toolkit.Resource {
	return []toolkit.Resource{
		resource.WithURI(aboutURI, resource.WithDescription("What this server is",
			resource.Must("about", "This is the toolkit example program in MCP server mode, speaking JSON-RPC on stdio.\n"))),
	}
}
