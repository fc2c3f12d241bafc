import {
  type AgentRegistered,
  type AgentRegistration,
  type CreateEnrolmentToken,
  ENROLMENT_TTL_DEFAULT_MS,
  ENROLMENT_TTL_MAX_MS,
  type EnrolmentRefusal,
  type EnrolmentToken,
  generateToken,
  hashToken,
  installCommand,
  isWellFormedToken,
  tokenLast4,
} from '@palisade/protocol';
import type { Database, EnrolmentTokenRow } from '../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import {
  countEnrolmentTokens,
  findEnrolmentToken,
  insertEnrolmentToken,
  listEnrolmentTokens,
  revokeEnrolmentToken,
  useEnrolmentToken,
} from '../repositories/enrolment-tokens.repository.js';
import { findProduct } from '../repositories/products.repository.js';
import type { ServersService } from './servers/index.js';

export const MAX_ENROLMENT_TOKENS_PER_ACCOUNT = 1000;

const REFUSALS: Record<EnrolmentRefusal, string> = {
  unknown: 'enrolment token unknown: check that the whole token was copied, or create a new one',
  expired: 'enrolment token expired: create a new one in the console (Add server, Install with one command)',
  used_up: 'enrolment token used up: it has registered as many servers as it allows; create a new one',
  revoked: 'enrolment token revoked: create a new one in the console',
};

/** 401 naming which of the four refusals it is, in the sentence and in `reason`. */
const refused = (reason: EnrolmentRefusal) => new AppError(401, REFUSALS[reason], { reason });

function stateOf(row: Pick<EnrolmentTokenRow, 'revoked_at' | 'expires_at' | 'uses' | 'max_uses'>, now: number) {
  if (row.revoked_at !== null) return 'revoked' as const;
  if (row.expires_at <= now) return 'expired' as const;
  if (row.uses >= row.max_uses) return 'used_up' as const;
  return 'active' as const;
}

function tokenView(row: EnrolmentTokenRow, now: number): EnrolmentToken {
  return {
    id: Number(row.id),
    product_id: Number(row.product_id),
    name: row.name,
    last4: row.last4,
    max_uses: Number(row.max_uses),
    uses: Number(row.uses),
    expires_at: Number(row.expires_at),
    revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
    created_at: Number(row.created_at),
    state: stateOf(
      { ...row, uses: Number(row.uses), max_uses: Number(row.max_uses), expires_at: Number(row.expires_at) },
      now,
    ),
  };
}

/** The agent's address seen from here: its source IP and metrics port (IPv4-mapped IPv6 unwrapped). */
export function derivedAgentUrl(sourceIp: string, port: number, tls: boolean): string {
  const ip = sourceIp.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return `${tls ? 'https' : 'http'}://${host}:${port}`;
}

export interface EnrolmentDeps {
  db: Database;
  clock: () => number;
  servers: ServersService;
}

/**
 * Enrolment tokens and agent-initiated registration: an account makes a token for one product; an
 * agent holding it registers itself, the console checks it back through /health (the same checks
 * as the add-server form) and answers the daemon token it checks in with.
 */
export function createEnrolmentService({ db, clock, servers }: EnrolmentDeps) {
  return {
    async list(accountId: number) {
      const now = clock();
      return (await listEnrolmentTokens(db, accountId)).map((row) => tokenView(row, now));
    },

    /** The raw token is in the answer once, with the install line; only its SHA-256 is kept. */
    async create(accountId: number, input: CreateEnrolmentToken, consoleUrl: string, releaseKey: string | null = null) {
      const now = clock();
      const product = await findProduct(db, accountId, input.product_id);
      if (!product) throw badRequest('product_id: no product with this id on your account');
      const expiresAt = input.expires_at ?? now + ENROLMENT_TTL_DEFAULT_MS;
      if (expiresAt <= now) throw badRequest('expires_at: must be in the future');
      if (expiresAt > now + ENROLMENT_TTL_MAX_MS) throw badRequest('expires_at: at most one year from now');
      if ((await countEnrolmentTokens(db, accountId)) >= MAX_ENROLMENT_TOKENS_PER_ACCOUNT) {
        throw conflict(`an account can hold at most ${MAX_ENROLMENT_TOKENS_PER_ACCOUNT} enrolment tokens`);
      }
      const token = generateToken('enrolment');
      const row = await insertEnrolmentToken(db, {
        account_id: accountId,
        product_id: product.id,
        name: input.name || product.name,
        token_hash: hashToken(token),
        last4: tokenLast4(token),
        max_uses: input.max_uses ?? 1,
        uses: 0,
        expires_at: expiresAt,
        revoked_at: null,
        created_at: now,
      });
      return {
        ...tokenView(row, now),
        token,
        command: installCommand(consoleUrl, token, false, releaseKey),
        root_command: installCommand(consoleUrl, token, true, releaseKey),
        release_key: releaseKey,
      };
    },

    /** Revoked tokens stay listed (with their use count); servers they added stay too. */
    async revoke(accountId: number, id: number) {
      if (!(await revokeEnrolmentToken(db, accountId, id, clock()))) throw notFound('enrolment token');
    },

    /**
     * `POST /api/agent/register`. The token is checked first (401 naming why), then the product's
     * room and the agent's /health (as the form: 409, 400 naming api_url); the use is counted last,
     * in one conditional statement, and a server that lost the race for the last use is removed. The
     * body is read only once the token is good (`input`), so a stranger learns nothing from it.
     */
    async register(raw: string | null, input: () => AgentRegistration, sourceIp: string): Promise<AgentRegistered> {
      if (!raw || !isWellFormedToken('enrolment', raw)) throw refused('unknown');
      const row = await findEnrolmentToken(db, hashToken(raw));
      if (!row || row.disabled_at !== null) throw refused('unknown');
      const state = tokenView(row, clock()).state;
      if (state !== 'active') throw refused(state);
      return registerWith(row, raw, input(), sourceIp);
    },
  };

  async function registerWith(
    row: EnrolmentTokenRow,
    raw: string,
    input: AgentRegistration,
    sourceIp: string,
  ): Promise<AgentRegistered> {
    const apiUrl = input.api_url ?? derivedAgentUrl(sourceIp, input.port, input.tls);
    const accountId = Number(row.account_id);
    const { server, daemonToken, connect } = await servers.register(
      accountId,
      {
        product_id: Number(row.product_id),
        name: input.name,
        api_url: apiUrl,
        api_key: input.api_key,
        tls_fingerprint: input.tls ? input.tls_fingerprint : null,
      },
      { connect: input.connect ?? 'direct', version: input.version },
    );
    if (!(await useEnrolmentToken(db, Number(row.id), clock()))) {
      await servers.unregister(accountId, server.id);
      const again = await findEnrolmentToken(db, hashToken(raw));
      const state = again ? tokenView(again, clock()).state : 'unknown';
      throw refused(state === 'active' ? 'used_up' : state);
    }
    return {
      server_id: Number(server.id),
      name: server.name,
      api_url: server.api_url,
      daemon_token: daemonToken,
      connect,
    };
  }
}

export type EnrolmentService = ReturnType<typeof createEnrolmentService>;
