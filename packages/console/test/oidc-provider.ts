/**
 * A real OpenID provider (the `oidc-provider` package) for the single sign-on tests, run as its own
 * process: `node oidc-provider.js`, set up by the environment:
 * - OIDC_PORT: where it listens on 127.0.0.1 (the issuer is http://127.0.0.1:<port>);
 * - OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI: the console's client;
 * - OIDC_USERS: {"<sub>": {"email", "email_verified", "name", "groups"}} the accounts it knows.
 * Its signing key is made at start, under the same key id every time: a second provider at the same
 * address signs with a key the console never saw. The sign-in is a form a test posts to
 * (`POST /interaction/<uid>/login`, `login=<sub>`; `GET /interaction/<uid>` shows it to a browser);
 * consent is given without asking.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** The parts of oidc-provider used here (the package has no type declarations). */
interface ProviderInstance {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: unknown, options?: unknown): Promise<void>;
  Grant: new (init: {
    clientId: string;
    accountId: string;
  }) => {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  };
}
type ProviderClass = new (issuer: string, configuration: unknown) => ProviderInstance;

interface TestUser {
  email: string;
  email_verified: boolean;
  name: string;
  groups: string[];
}

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const users = JSON.parse(process.env.OIDC_USERS ?? '{}') as Record<string, TestUser>;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'palisade-test', use: 'sig', alg: 'RS256' };

const packageName = 'oidc-provider';
const Provider = ((await import(packageName)) as { default: ProviderClass }).default;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID,
      client_secret: process.env.OIDC_CLIENT_SECRET,
      redirect_uris: [process.env.OIDC_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [jwk] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  // The claims in the ID token itself, as Keycloak and Authentik put them there.
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  async findAccount(_ctx: unknown, sub: string) {
    const user = users[sub];
    return user ? { accountId: sub, claims: async () => ({ sub, ...user }) } : undefined;
  },
  async loadExistingGrant(ctx: {
    oidc: { client: { clientId: string }; session: { accountId: string }; provider: ProviderInstance };
  }) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
});

/** The sign-in page a browser sees: one field, the account's subject. */
const loginPage = (
  uid: string,
) => `<!doctype html><html lang="en"><head><title>Test provider</title><link rel="icon" href="data:,"></head>
<body><main><h1>Test OpenID provider</h1><form method="post" action="/interaction/${uid}/login">
<label>Account <input name="login" autocomplete="off"></label> <button type="submit">Sign in</button>
</form></main></body></html>`;

const handle = provider.callback();
const server = createServer(async (req, res) => {
  const page = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '');
  if (req.method === 'GET' && page) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    return res.end(loginPage(page[1]!));
  }
  const login = /^\/interaction\/([^/]+)\/login$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !login) return handle(req, res);
  try {
    let body = '';
    for await (const chunk of req) body += chunk;
    const sub = new URLSearchParams(body).get('login') ?? '';
    await provider.interactionDetails(req, res);
    await provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
  } catch (err) {
    res.statusCode = 400;
    res.end(String(err));
  }
});
server.listen(port, '127.0.0.1', () => console.log(`provider listening on ${issuer}`));
