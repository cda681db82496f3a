// serveFetch serves handler (an object with a web-standard fetch(Request)
// method, as the TypeScript SDK's createMcpHandler returns) over node:http
// on a free loopback port, streaming each response body as it comes (SSE),
// and writes "listening on http://127.0.0.1:PORT/mcp" on stdout once it
// listens. Used by the peers that serve streamable HTTP.
import { createServer } from 'node:http';

export function serveFetch(handler) {
	const http = createServer(async (req, res) => {
		try {
			const chunks = [];
			for await (const c of req) chunks.push(c);
			const body = chunks.length ? Buffer.concat(chunks) : undefined;
			const headers = new Headers();
			for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
			const abort = new AbortController();
			res.on('close', () => abort.abort());
			const request = new Request(`http://${req.headers.host}${req.url}`, {
				method: req.method,
				headers,
				body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
				signal: abort.signal,
			});
			const response = await handler.fetch(request);
			res.writeHead(response.status, Object.fromEntries(response.headers));
			if (response.body) {
				for await (const chunk of response.body) res.write(chunk);
			}
			res.end();
		} catch (e) {
			if (!res.headersSent) res.writeHead(500);
			res.end();
		}
	});
	http.listen(0, '127.0.0.1', () => {
		process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
	});
	return http;
}
