// An MCP Apps host written with the extension's own SDK
// (@modelcontextprotocol/ext-apps: AppBridge on the host side, App in the
// view) and the TypeScript SDK's client, that the Go tests run against
// the gateway.
//
// Usage: node appshost.mjs URL TOKEN FOREIGN
//
// The host connects to URL (streamable HTTP, bearer TOKEN), declaring the
// MCP Apps extension, and:
//   1. lists the tools; prints {"event":"tools","names":[...],
//      "appOnly":[...],"views":{tool: uri}};
//   2. reads the view of the first tool that has one; prints
//      {"event":"view","uri":...,"mimeType":...,"ui":{...}};
//   3. starts a view (an App) of that tool, linked to an AppBridge over
//      the client in memory, and from the view calls each app-only tool
//      the host listed, then FOREIGN (the name of a tool of another
//      server); prints {"event":"call","name":...,"ok":bool,"error":...}
//      for each;
//   4. closes and exits 0.
// One JSON object a line on stdout. Any other failure prints
// {"event":"error",...} and exits 1; nothing waits longer than 20 seconds.
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { App } from '@modelcontextprotocol/ext-apps';
import { AppBridge, getToolUiResourceUri, isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge';

const [url, token, foreign] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const fail = (what, e) => {
	out({ event: 'error', what, message: String(e?.message ?? e) });
	process.exit(1);
};
const within = (what, p) =>
	Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within 20 s`)), 20000).unref())]);
const ui = 'io.modelcontextprotocol/ui';

const client = new Client(
	{ name: 'apps-host', version: '1' },
	{ capabilities: { extensions: { [ui]: { mimeTypes: ['text/html;profile=mcp-app'] } } }, versionNegotiation: { mode: 'legacy' } },
);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
try {
	await within('connection', client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })));
} catch (e) {
	fail('connect', e);
}

let tools;
try {
	tools = (await within('tool list', client.listTools())).tools;
} catch (e) {
	fail('listTools', e);
}
const views = {};
for (const t of tools) {
	const uri = getToolUiResourceUri(t);
	if (uri) views[t.name] = uri;
}
const appOnly = tools.filter((t) => isToolVisibilityAppOnly(t)).map((t) => t.name);
out({ event: 'tools', names: tools.map((t) => t.name), appOnly, views });

const viewTool = Object.keys(views).find((n) => !appOnly.includes(n));
if (!viewTool) fail('views', 'no tool with a view');
try {
	const res = await within('view', client.readResource({ uri: views[viewTool] }));
	const c = res.contents[0];
	out({ event: 'view', uri: c.uri, mimeType: c.mimeType, ui: c._meta?.ui ?? null });
} catch (e) {
	fail('readResource', e);
}

const bridge = new AppBridge(client, { name: 'apps-host', version: '1' }, { serverTools: {} });
const app = new App({ name: 'view', version: '1' }, {}, { autoResize: false });
const [hostSide, viewSide] = InMemoryTransport.createLinkedPair();
try {
	await within('bridge', bridge.connect(hostSide));
	await within('view', app.connect(viewSide));
} catch (e) {
	fail('bridge', e);
}
for (const name of [...appOnly, foreign]) {
	try {
		const r = await within(`call ${name}`, app.callServerTool({ name, arguments: {} }));
		out({ event: 'call', name, ok: !r.isError, error: r.isError ? JSON.stringify(r.content) : null });
	} catch (e) {
		out({ event: 'call', name, ok: false, error: String(e?.message ?? e) });
	}
}
await app.close();
await bridge.close();
await client.close();
process.exit(0);
