// A real authorization server for the tests: panva's oidc-provider (installed into
// .interop/oidc by scripts/install-servers.sh), with the client-credentials grant and resource
// indicators (RFC 8707) on, issuing JWT access tokens whose `aud` is the resource asked for.
//
// Usage: node oidc_as.mjs PORT CLIENT_ID CLIENT_SECRET [--resource URL]... [--ttl SECONDS]
//
// Serves on 127.0.0.1:PORT as issuer http://127.0.0.1:PORT: OpenID discovery at
// /.well-known/openid-configuration (no RFC 8414 document: clients fall back to it), the token
// endpoint at /token, the key set at /jwks. Only the one client, authenticated by
// client_secret_basic or client_secret_post; only the resources named (any other is refused
// with invalid_target); tokens live TTL seconds (default 3600). Keys are generated at start.
import { createRequire } from 'node:module';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '.interop', 'oidc', 'package.json'));
const { default: Provider, errors } = await import(require.resolve('oidc-provider'));

const [port, clientId, clientSecret, ...rest] = process.argv.slice(2);
if (!clientSecret) {
  console.error('usage: node oidc_as.mjs PORT CLIENT_ID CLIENT_SECRET [--resource URL]... [--ttl SECONDS]');
  process.exit(2);
}
const resources = [];
let ttl = 3600;
for (let i = 0; i < rest.length; i += 1) {
  if (rest[i] === '--resource') resources.push(rest[(i += 1)]);
  else if (rest[i] === '--ttl') ttl = Number(rest[(i += 1)]);
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-1', use: 'sig', alg: 'RS256' };

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp:read mcp:write',
    },
  ],
  scopes: ['mcp:read', 'mcp:write'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, resourceIndicator) {
        if (!resources.includes(resourceIndicator)) {
          throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        }
        return { scope: 'mcp:read mcp:write', audience: resourceIndicator, accessTokenTTL: ttl, accessTokenFormat: 'jwt' };
      },
    },
  },
  clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
});
provider.listen(Number(port), '127.0.0.1');
