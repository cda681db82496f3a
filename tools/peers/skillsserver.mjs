// An MCP server of skills (SEP-2640, io.modelcontextprotocol/skills)
// written with the Skills extension SDK (@olaservo/ext-skills) over the
// TypeScript SDK v2 (@modelcontextprotocol/server), which the Go tests run
// the connector and the gateway against. It serves the skill folders of a
// directory (skills/list, skills/get, skill:// resources and
// resources/directory/read), in 2025-11-25 (initialize) and 2026-07-28
// (server/discover), as its client asks. The SDK snapshots the files when
// it starts.
//
// Usage: node skillsserver.mjs DIR           (stdio)
//        node skillsserver.mjs DIR --http    (streamable HTTP on a free
//                                             loopback port; prints
//                                             "listening on URL")
import { serveFetch } from './webhttp.mjs';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { discoverSkills, registerSkillResources } from '@olaservo/ext-skills/server';

const dir = process.argv[2];
if (!dir) {
	process.stderr.write('usage: node skillsserver.mjs DIR [--http]\n');
	process.exit(2);
}
const skills = discoverSkills(dir);

const factory = () => {
	const server = new McpServer({ name: 'skills-server', version: '0.14.0' }, { capabilities: { resources: {} } });
	registerSkillResources(server, skills, dir, { directoryRead: true });
	return server;
};

if (process.argv[3] !== '--http') {
	serveStdio(factory);
} else {
	const handler = createMcpHandler(factory);
	serveFetch(handler);
}
