// A stdio MCP server written with the TypeScript SDK (v2,
// @modelcontextprotocol/server) that the Go tests run the connector
// against. It speaks 2025-11-25 (initialize) and 2026-07-28
// (server/discover), as its client asks.
//
// Usage: node tsserver.mjs
//
// Tools:
//   echo {text}   returns text.
//   ask_model     asks the client's model (sampling) "colour?" and returns
//                 "model: <answer>".
//   ask_user      asks the user (elicitation) for a name and returns
//                 "user: <action> <name>".
//   add_tool      registers the tool "late" (a tools/list_changed follows).
// ask_model and ask_user are written the 2026-07-28 way, with input-required
// results; the SDK turns them into server requests for a 2025-11-25 client.
import { McpServer, fromJsonSchema, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const object = (properties = {}) => fromJsonSchema({ type: 'object', properties });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// serveStdio lets the opening message choose the era: server/discover the
// 2026-07-28 one, initialize the 2025 one, each from the same factory.
serveStdio(() => {
	const server = new McpServer({ name: 'ts-server', version: '2.4.0' }, { capabilities: { tools: { listChanged: true } } });

	server.registerTool('echo', { description: 'Echoes its text.', inputSchema: object({ text: { type: 'string' } }) }, async ({ text: t }) => text(t));

	server.registerTool('ask_model', { description: "Asks the client's model.", inputSchema: object() }, async (_args, ctx) => {
		const r = inputResponse(ctx.mcpReq.inputResponses, 'm');
		if (r.kind !== 'sampling') {
			return inputRequired({
				inputRequests: {
					m: inputRequired.createMessage({ maxTokens: 5, messages: [{ role: 'user', content: { type: 'text', text: 'colour?' } }] }),
				},
				requestState: 'ts-state-m',
			});
		}
		const c = Array.isArray(r.result.content) ? r.result.content[0] : r.result.content;
		return text(`model: ${c?.text}`);
	});

	server.registerTool('ask_user', { description: 'Asks the user for a name.', inputSchema: object() }, async (_args, ctx) => {
		const r = inputResponse(ctx.mcpReq.inputResponses, 'u');
		if (r.kind !== 'elicit') {
			return inputRequired({
				inputRequests: {
					u: inputRequired.elicit({ message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }),
				},
				requestState: 'ts-state-u',
			});
		}
		return text(`user: ${r.action} ${r.content?.name}`);
	});

	server.registerTool('add_tool', { description: 'Adds the tool "late".', inputSchema: object() }, async () => {
		server.registerTool('late', { description: 'Added late.', inputSchema: object() }, async () => text('late'));
		return text('added');
	});
	return server;
});
