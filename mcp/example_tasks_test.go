package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// A server declares that one of its tools must run as a task: the tool is
// listed, with its requirement, and calls to it fail at once.
func ExampleTaskSupporter() {
	server, _ := mcp.NewTaskServerForTest(map[string]string{"must": "required", "maybe": "optional"})
	mem := testserver.NewMemory(server)
	defer mem.Close()

	ready := make(chan struct{}, 1)
	c, err := mcp.New("memory://tasks", "example", "1", mcp.OptDialer(mem.Dial),
		mcp.OptLogger(slog.New(slog.DiscardHandler)),
		mcp.OptOnStateChange(func(_ context.Context, s *toolkit.ConnectorState) {
			if s.Status == toolkit.StatusReady {
				select {
				case ready <- struct{}{}:
				default:
				}
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-ready

	tools, _ := c.ListTools(ctx)
	for _, t := range tools {
		if t.Name() == "must" || t.Name() == "maybe" {
			fmt.Println(t.Name(), t.(mcp.TaskSupporter).TaskSupport())
		}
	}
	for _, t := range tools {
		if t.Name() == "must" {
			_, err := t.Run(ctx, []byte(`{}`))
			fmt.Println(errors.Is(err, mcp.ErrTaskRequired))
		}
	}
	// Unordered output:
	// must required
	// maybe optional
	// true
}
