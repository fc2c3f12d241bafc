import { fileURLToPath } from 'node:url';
import { type Captured, spawnCaptured } from '@palisade/testkit';

const PROVIDER = fileURLToPath(new URL('./oidc-provider.js', import.meta.url));

/** An account the test provider knows (OIDC_USERS of oidc-provider.ts), by its subject. */
export interface OidcTestUser {
  email: string;
  email_verified: boolean;
  name: string;
  groups: string[];
}

/**
 * A real OpenID provider (oidc-provider.ts) in its own process at http://127.0.0.1:<port>, with
 * one client and these accounts, and a signing key made at its start.
 */
export async function startOidcProvider(
  port: number,
  client: { id: string; secret: string; redirectUri: string },
  users: Record<string, OidcTestUser>,
): Promise<Captured> {
  const p = spawnCaptured(process.execPath, [PROVIDER], {
    env: {
      PATH: process.env.PATH ?? '',
      OIDC_PORT: String(port),
      OIDC_CLIENT_ID: client.id,
      OIDC_CLIENT_SECRET: client.secret,
      OIDC_REDIRECT_URI: client.redirectUri,
      OIDC_USERS: JSON.stringify(users),
    },
  });
  if (!(await p.waitFor(/provider listening on/))) throw new Error(`the OpenID provider did not start:\n${p.output()}`);
  return p;
}
