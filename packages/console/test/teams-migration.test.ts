import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { findMember } from '../src/repositories/team-members.repository.js';
import { actorOf } from '../src/services/accounts.service.js';
import { dialects, dropSchema } from './support.js';

// biome-ignore lint/suspicious/noExplicitAny: the tables as they were before migration 0028
type Before = Kysely<any>;

/** Two accounts as the migrations before teams left them, with a row in each table that moves. */
async function seed(db: Before) {
  const account = (id: number, permissions: string[], totp: boolean) => ({
    email: `owner${id}@example.com`,
    name: `Owner ${id}`,
    password_hash: `hash-${id}`,
    role: id === 1 ? 'admin' : 'user',
    permissions: JSON.stringify(permissions),
    disabled_at: id === 2 ? 1_700_000_000_000 : null,
    created_at: 1_600_000_000_000 + id,
    totp_secret_enc: totp ? `sealed-${id}` : null,
    totp_pending_enc: null,
    totp_enabled_at: totp ? 1_650_000_000_000 : null,
    totp_last_step: totp ? 42 : null,
  });
  // In this order a fresh database gives them ids 1 and 2.
  const ids = await db
    .insertInto('accounts')
    .values([account(1, ['control.read', 'control.edit'], true), account(2, ['control.read'], false)])
    .returning('id')
    .execute();
  assert.deepEqual(
    ids.map((r) => Number(r.id)),
    [1, 2],
  );
  await db
    .insertInto('sessions')
    .values({
      id_hash: 's1',
      account_id: 1,
      created_at: 1,
      expires_at: 9e15,
      last_seen_at: 1,
      ip: null,
      user_agent: null,
    })
    .execute();
  await db
    .insertInto('access_tokens')
    .values({ account_id: 2, name: 't', token_hash: 'th', last4: 'abcd', created_at: 1, last_used_at: null })
    .execute();
  await db
    .insertInto('signing_keys')
    .values({ account_id: 1, name: 'k', key_hash: 'kh', last4: 'wxyz', created_at: 1, last_used_at: null })
    .execute();
  await db
    .insertInto('recovery_codes')
    .values({ account_id: 1, code_hash: 'rc', used_at: null, created_at: 1 })
    .execute();
  await db
    .insertInto('login_challenges')
    .values({ id_hash: 'lc', account_id: 1, failures: 2, created_at: 1, expires_at: 9e15 })
    .execute();
  const event = { reason: 'r', method: 'POST', path: '/p', ip: '192.0.2.1', created_at: 1 };
  await db
    .insertInto('security_events')
    .values([
      { ...event, account_id: 1, kind: 'login_failed', key_last4: null },
      { ...event, account_id: 2, kind: 'signed_request_failed', key_last4: 'wxyz' },
    ])
    .execute();
}

for (const dialect of dialects()) {
  describe(`migration 0028, teams (${dialect})`, () => {
    test('every account becomes a person with the same id and the owner of a team of one; nothing is lost', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'palisade-teams-'));
      const databaseUrl = dialect === 'postgres' ? process.env.PALISADE_TEST_DATABASE_URL! : null;
      const databaseSchema = dialect === 'postgres' ? `t_${process.pid}_teams_${Date.now() % 100000}` : null;
      const settings = { dataDir, databaseUrl, databaseSchema };
      try {
        const before = await openDatabase(settings, { upTo: '0027_agent_rollouts' });
        await seed(before.db as Before);
        await before.close();

        const after = await openDatabase(settings);
        try {
          const db = after.db;
          const people = await db.selectFrom('people').selectAll().orderBy('id').execute();
          assert.deepEqual(
            people.map((p) => ({ ...p, id: Number(p.id) })),
            [1, 2].map((id) => ({
              id,
              email: `owner${id}@example.com`,
              name: `Owner ${id}`,
              password_hash: `hash-${id}`,
              role: id === 1 ? 'admin' : 'user',
              disabled_at: id === 2 ? 1_700_000_000_000 : null,
              created_at: 1_600_000_000_000 + id,
              totp_secret_enc: id === 1 ? 'sealed-1' : null,
              totp_pending_enc: null,
              totp_enabled_at: id === 1 ? 1_650_000_000_000 : null,
              totp_last_step: id === 1 ? 42 : null,
            })),
          );
          const members = await db.selectFrom('team_members').selectAll().orderBy('account_id').execute();
          assert.deepEqual(
            members.map((m) => [Number(m.account_id), Number(m.person_id), m.role, m.granted, m.revoked]),
            [
              [1, 1, 'owner', '[]', '[]'],
              [2, 2, 'owner', '[]', '["control.edit"]'],
            ],
          );
          // The owners keep exactly the control permissions they had; the rest of the owner role is theirs.
          const second = actorOf((await findMember(db, 2, 2))!);
          assert.deepEqual(JSON.parse(second.permissions), ['control.read']);
          assert.ok(second.team_permissions.includes('members.manage'));
          assert.deepEqual(JSON.parse(actorOf((await findMember(db, 1, 1))!).permissions), [
            'control.read',
            'control.edit',
          ]);

          const pick = async (table: 'sessions' | 'access_tokens' | 'signing_keys') =>
            (await db.selectFrom(table).select(['account_id', 'person_id']).execute()).map((r) => [
              Number(r.account_id),
              Number(r.person_id),
            ]);
          assert.deepEqual(await pick('sessions'), [[1, 1]]);
          assert.deepEqual(await pick('access_tokens'), [[2, 2]]);
          assert.deepEqual(await pick('signing_keys'), [[1, 1]]);
          const codes = await db.selectFrom('recovery_codes').selectAll().execute();
          assert.deepEqual(
            codes.map((c) => [Number(c.person_id), c.code_hash, c.used_at]),
            [[1, 'rc', null]],
          );
          const challenges = await db.selectFrom('login_challenges').selectAll().execute();
          assert.deepEqual(
            challenges.map((c) => [c.id_hash, Number(c.person_id), Number(c.failures)]),
            [['lc', 1, 2]],
          );
          const events = await db.selectFrom('security_events').selectAll().orderBy('id').execute();
          assert.deepEqual(
            events.map((e) => [
              e.kind,
              e.account_id === null ? null : Number(e.account_id),
              e.person_id === null ? null : Number(e.person_id),
            ]),
            [
              ['login_failed', null, 1],
              ['signed_request_failed', 2, null],
            ],
          );

          // New people and recovery codes take ids after the migrated ones (the sequences moved on).
          const person = await db
            .insertInto('people')
            .values({
              email: 'new@example.com',
              name: 'N',
              password_hash: 'x',
              role: 'user',
              disabled_at: null,
              created_at: 5,
              totp_secret_enc: null,
              totp_pending_enc: null,
              totp_enabled_at: null,
              totp_last_step: null,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          assert.equal(Number(person.id), 3);
          const code = await db
            .insertInto('recovery_codes')
            .values({ person_id: 1, code_hash: 'rc2', used_at: null, created_at: 2 })
            .returning('id')
            .executeTakeFirstOrThrow();
          assert.equal(Number(code.id), 2);
        } finally {
          await after.close();
        }
      } finally {
        if (databaseUrl && databaseSchema) await dropSchema(databaseUrl, databaseSchema);
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}
