// Package bridge holds the few contracts that the two MCP faces of the
// toolkit share, so that an item a connector brings in from a remote server
// passes through a toolkit served over MCP unchanged. Package
// [github.com/llmkit/toolkit/mcp] (the connector) implements them on the
// items and sessions it makes; package
// [github.com/llmkit/toolkit/mcp/mcpserver] (the server face) looks for
// them. Neither face imports the other.
//
//   - [ContentCarrier] and [StructuredCarrier]: a resource that knows its
//     MCP content blocks (and structured content). A tool result or prompt
//     message made from one is sent as those blocks, exactly. [ToolContent]
//     is a ready resource of this kind for tools that want full control of
//     their MCP result.
//   - [ServerRequestHandler]: a toolkit session that can answer the
//     sampling and elicitation requests a remote server sends while one of
//     its tools runs for the session's caller.
//   - [Client], [ClientCarrier] and [ClientObserver]: the session of one
//     client of a server face, which outlives its calls, so a connector
//     can keep an upstream session of that client's own (its roots, its
//     sampling and elicitation) and open it as the client's session
//     starts.
//   - [CallCredentials]: the session of a call that came with a bearer
//     token, so a connector can exchange the caller's own token for one of
//     the upstream server.
//   - [TypedReader]: a resource that learns its content's MIME type and
//     `_meta` only when read (a remote resource), so the server passes
//     them on ([Contents]).
//   - [LogForwarder]: a session that takes an upstream server's log
//     notifications as they came (level, logger, data), so a gateway passes
//     them on unchanged.
//   - [Subscriber]: a resource whose updates can be followed, so a server
//     subscribes upstream only to what its own clients follow.
//   - [Completer]: a prompt or resource template that can suggest values
//     for its arguments, so a server's completion/complete reaches the
//     upstream server an item came from.
//   - [SchemaTexter]: a tool that holds its schemas as JSON text, so a
//     server registers the text instead of a decoded copy of each schema.
//   - [InputRound] and [InputRequired]: a caller that passes a remote
//     server's input-required results (protocol 2026-07-28) on to its own
//     client, and the connector's answer to it, so the upstream's rounds
//     go through a gateway with the upstream's requestState kept.
//   - [InjectTraceMeta] and [ExtractTraceMeta]: W3C trace context in the
//     _meta map of MCP requests, so a call joins its caller's trace across
//     every hop.
//   - [WithRequestMeta] and [RequestMetaFrom]: a caller's request `_meta`,
//     which a connector sends on to its server with the call's request.
package bridge
