package bridge

// ProgressTaker is implemented by toolkit sessions that know whether their
// caller takes progress: the sessions an
// [github.com/llmkit/toolkit/mcp/mcpserver.Server] gives its clients'
// calls report whether the client's request carried a progress token. A
// connector asks its server for progress (a progress token in the
// request) only for a call whose session takes it, or that does not say.
type ProgressTaker interface {
	TakesProgress() bool
}
