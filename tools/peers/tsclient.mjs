// A client written with the TypeScript SDK (v2, @modelcontextprotocol/client)
// that the Go tests run against the server face and the gateway.
//
// Usage: node tsclient.mjs URL VERSION [noresources]
//
// VERSION is "legacy" (the initialize handshake, 2025-11-25) or a revision
// pinned with server/discover ("2026-07-28"). The client answers sampling
// with "teal" and elicitation with {name: "Ada"}, then:
//   1. connects and prints {"event":"connected","version":...};
//   2. lists the tools and prints their names;
//   3. calls echo {"text":"hi"}, ask_model and ask_user, printing each outcome;
//   4. follows tool list changes and the resource test://text (unless
//      "noresources" is given), prints {"event":"listening"}, and waits for
//      one update of that resource and one tool list change, printing each
//      as it comes;
//   5. closes and exits 0.
// One JSON object a line on stdout. Any failure prints {"event":"error",...}
// and exits 1; nothing waits longer than 20 seconds.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, version, flag] = process.argv.slice(2);
const resources = flag !== 'noresources';
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const fail = (what, e) => {
	out({ event: 'error', what, message: String(e?.message ?? e) });
	process.exit(1);
};
const within = (what, p) =>
	Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within 20 s`)), 20000).unref())]);

const client = new Client(
	{ name: 'ts-client', version: '2.4.0' },
	{
		capabilities: { sampling: {}, elicitation: { form: {} } },
		versionNegotiation: version === 'legacy' ? { mode: 'legacy' } : { mode: { pin: version } },
	},
);
client.setRequestHandler('sampling/createMessage', async () => ({
	model: 'm',
	role: 'assistant',
	content: { type: 'text', text: 'teal' },
}));
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
let toolsChanged;
const changed = new Promise((resolve) => (toolsChanged = resolve));
client.setNotificationHandler('notifications/tools/list_changed', () => toolsChanged());
let resourceUpdated;
const updated = new Promise((resolve) => (resourceUpdated = resolve));
client.setNotificationHandler('notifications/resources/updated', (n) => resourceUpdated(n.params.uri));

try {
	await within('connection', client.connect(new StreamableHTTPClientTransport(new URL(url))));
} catch (e) {
	fail('connect', e);
}
out({ event: 'connected', version: client.getNegotiatedProtocolVersion(), era: client.getProtocolEra() });

try {
	const tools = await within('tool list', client.listTools());
	out({ event: 'tools', names: tools.tools.map((t) => t.name) });
} catch (e) {
	fail('tools/list', e);
}

for (const [name, args] of [
	['echo', { text: 'hi' }],
	['ask_model', {}],
	['ask_user', {}],
]) {
	try {
		const r = await within(`answer to ${name}`, client.callTool({ name, arguments: args }));
		out({ event: 'call', name, error: !!r.isError, text: r.content?.[0]?.text ?? '' });
	} catch (e) {
		out({ event: 'call', name, error: true, text: String(e?.message ?? e) });
	}
}

const uri = 'test://text';
let subscription;
try {
	if (client.getProtocolEra() === 'modern') {
		const filter = resources ? { toolsListChanged: true, resourceSubscriptions: [uri] } : { toolsListChanged: true };
		subscription = await within('acknowledgement', client.listen(filter));
	} else if (resources) {
		await within('subscription', client.subscribeResource({ uri }));
	}
} catch (e) {
	fail('subscribe', e);
}
out({ event: 'listening' });
try {
	if (resources) out({ event: 'updated', uri: await within('resource update', updated) });
	await within('tool list change', changed);
	out({ event: 'changed' });
} catch (e) {
	fail('notifications', e);
}
await subscription?.close();
await client.close();
process.exit(0);
