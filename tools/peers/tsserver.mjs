// A stdio MCP server written with the TypeScript SDK (v2,
// @modelcontextprotocol/server) that the Go tests run the connector
// against. It speaks 2025-11-25 (initialize) and 2026-07-28
// (server/discover), as its client asks.
//
// Usage: node tsserver.mjs           (stdio)
//        node tsserver.mjs --http    (streamable HTTP on a free loopback
//                                     port; prints "listening on URL")
//
// Tools:
//   echo {text}   returns text.
//   ask_model     asks the client's model (sampling) "colour?" and returns
//                 "model: <answer>".
//   ask_user      asks the user (elicitation) for a name and returns
//                 "user: <action> <name>".
//   add_tool      adds the tool "late" (a tools/list_changed follows).
// ask_model and ask_user are written the 2026-07-28 way, with input-required
// results; the SDK turns them into server requests for a 2025-11-25 client.
import { serveFetch } from './webhttp.mjs';
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const object = (properties = {}) => fromJsonSchema({ type: 'object', properties });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// Over HTTP each request gets an instance of its own: what add_tool did is
// kept here, and the change published on the handler's bus.
let late = false;
let announce = () => {};

// The same factory serves both eras (the opening message chooses).
const factory = () => {
	const server = new McpServer({ name: 'ts-server', version: '2.4.0' }, { capabilities: { tools: { listChanged: true } } });
	const addLate = () => server.registerTool('late', { description: 'Added late.', inputSchema: object() }, async () => text('late'));
	if (late) addLate();

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
		if (!late) {
			late = true;
			addLate();
			announce();
		}
		return text('added');
	});
	return server;
};

if (process.argv[2] !== '--http') {
	serveStdio(factory);
} else {
	const handler = createMcpHandler(factory);
	announce = () => handler.notify.toolsChanged();
	serveFetch(handler);
}
