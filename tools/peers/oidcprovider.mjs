// An OpenID provider for the Go tests: panva's oidc-provider (OpenID
// certified) on a free loopback port, with its own defaults wherever a
// test does not need otherwise. In particular the rule of OpenID Connect
// Core §11 stays as the package enforces it: offline_access is dropped
// from an authorization request that does not carry prompt=consent, and
// no refresh token is issued then.
//
// Usage: node oidcprovider.mjs    (prints "listening on ISSUER" once ready)
//
// What differs from the defaults:
//   - dynamic client registration is open (RFC 7591, no initial token);
//   - resource indicators (RFC 8707): every absolute http(s) resource is
//     a resource server with the scope "mcp" and JWT access tokens (RFC
//     9068) whose audience is the resource; a refresh without a resource
//     parameter gets a token for the resource granted;
//   - any login is an account (the development interactions the package
//     ships: a login form, any name and password, then a consent form).
// Everything is in memory; the signing keys are the package's development
// keys. It exits on SIGTERM.
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

const http = createServer();

http.listen(0, '127.0.0.1', () => {
	const issuer = `http://127.0.0.1:${http.address().port}`;
	const provider = new Provider(issuer, {
		features: {
			registration: { enabled: true },
			resourceIndicators: {
				enabled: true,
				useGrantedResource: async () => true,
				getResourceServerInfo: async (_ctx, resource) => {
					const u = new URL(resource);
					if (u.protocol !== 'http:' && u.protocol !== 'https:') {
						throw new Provider.errors.InvalidTarget();
					}
					return { scope: 'mcp', audience: resource, accessTokenFormat: 'jwt' };
				},
			},
		},
		findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
		cookies: { keys: [randomBytes(32).toString('base64url')] },
	});
	http.on('request', provider.callback());
	process.stdout.write(`listening on ${issuer}\n`);
});

process.on('SIGTERM', () => process.exit(0));
