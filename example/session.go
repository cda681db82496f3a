package main

import (
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// consoleSession is the toolkit.Session of the demo's own calls: it is what
// an MCP server would give a tool, but it prints progress reports on the
// console as they arrive. Put it in a context with
// toolkit.ContextWithSession; tools (and remote tools, whose server's
// progress notifications the connector routes back) find it with
// toolkit.SessionFromContext.
type consoleSession struct {
	out    *console
	logger *slog.Logger
}

var _ toolkit.Session = (*consoleSession)(nil)

func (s *consoleSession) ID() string                            { return "console" }
func (s *consoleSession) ClientInfo() *sdk.Implementation       { return nil }
func (s *consoleSession) Capabilities() *sdk.ClientCapabilities { return nil }
func (s *consoleSession) Meta() map[string]any                  { return nil }
func (s *consoleSession) Logger() *slog.Logger                  { return s.logger }

// Progress prints one progress report.
func (s *consoleSession) Progress(progress, total float64, message ...string) error {
	if err := toolkit.CheckProgressMessage(message); err != nil {
		return err
	}
	line := "  progress " + formatNumber(progress)
	if total > 0 {
		line += "/" + formatNumber(total)
	}
	if len(message) == 1 {
		line += ": " + message[0]
	}
	s.out.Println(line)
	return nil
}
