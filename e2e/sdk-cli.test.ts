import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { agentHealthSchema, agentMetricsSchema } from '@palisade/protocol';
import { AgentClient, PalisadeError, SignedClient, V1Client } from '@palisade/sdk';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  runCli,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const CLI = fileURLToPath(new URL('../../packages/sdk/dist/src/cli.js', import.meta.url));

const palisade = (args: string[], env: Record<string, string> = {}) => runCli(CLI, args, { HOME: dir.path, ...env });

const dir = tempDir('palisade-sdk-');

describe('the SDK and the palisade CLI against a real console and agent', () => {
  let consoleProc: ConsoleProcess;
  let agent: AgentProcess;
  let token = '';
  let serverId = 0;
  let env: Record<string, string> = {};
  let productId = 0;
  let cookie = '';
  let post: (
    path: string,
    body: unknown,
    cookie?: string,
    headers?: Record<string, string>,
  ) => Promise<{ res: Response; json: { data: Record<string, { id: number }> & { token: string } } }>;

  before(async () => {
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    agent = await startAgent();
    post = async (path, body, cookie, headers = {}) => {
      const res = await fetch(`${consoleProc.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}), ...headers },
        body: JSON.stringify(body),
      });
      return { res, json: (await res.json()) as { data: Record<string, { id: number }> & { token: string } } };
    };
    const reg = await post('/api/auth/register', {
      email: `sdk-${process.pid}@example.com`,
      password: 'sdk-password',
      name: 'SDK User',
    });
    cookie = reg.res.headers.get('set-cookie')!.split(';')[0]!;
    token = (await post('/api/tokens', { name: 'cli' }, cookie)).json.data.token;
    const product = (await post('/api/products', { catalog_id: 1 }, cookie)).json.data.product!;
    productId = product.id;
    serverId = (
      await post(
        '/api/servers',
        { product_id: product.id, name: 'sdk-box', api_url: agent.url, api_key: agent.key },
        cookie,
      )
    ).json.data.server!.id;
    const signingKey = (await post('/api/keys', { name: 'cli' }, cookie)).json.data.key as unknown as string;
    env = {
      PALISADE_URL: consoleProc.url,
      PALISADE_TOKEN: token,
      PALISADE_KEY: signingKey,
      PALISADE_AGENT_URL: agent.url,
      PALISADE_AGENT_KEY: agent.key,
    };
  });

  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    dir.remove();
  });

  test('the v1 client returns typed results and typed errors', async () => {
    const client = new V1Client({ baseUrl: consoleProc.url, token });
    assert.equal((await client.me()).name, 'SDK User');
    const servers = await client.servers();
    assert.deepEqual(
      servers.map((s) => s.id),
      [serverId],
    );
    await eventually('a check-in', async () => ((await client.server(serverId)).latest_sample ? true : undefined));
    assert.deepEqual(await client.benchmarks(serverId), []);
    await assert.rejects(
      client.server(999_999),
      (err: unknown) => err instanceof PalisadeError && err.status === 404 && err.isNotFound,
    );
    const bad = new V1Client({ baseUrl: consoleProc.url, token: `svc_${'x'.repeat(38)}` });
    await assert.rejects(
      bad.me(),
      (err: unknown) => err instanceof PalisadeError && err.status === 401 && err.isAuth && err.error.length > 0,
    );
  });

  test('the agent client reads health and metrics with the agent key', async () => {
    const client = new AgentClient({ baseUrl: agent.url, key: agent.key });
    agentHealthSchema.strict().parse(await client.health());
    agentMetricsSchema.strict().parse(await client.metrics());
    assert.equal(typeof (await client.metrics()).ts, 'number');
    const wrong = new AgentClient({ baseUrl: agent.url, key: `${agent.key.slice(0, -6)}AAAAAA` });
    await assert.rejects(wrong.health(), (err: unknown) => err instanceof PalisadeError && err.status === 401);
    assert.throws(() => new AgentClient({ baseUrl: 'ftp://x', key: 'k' }), /baseUrl/);
    // "Why is this address blocked?" through the SDK: the typed lookup and the GET's input as its query.
    const client2 = new AgentClient({ baseUrl: agent.url, key: agent.key });
    await client2.control('POST', 'blacklist', { ip: '203.0.113.0/24', note: 'sdk' });
    const lookup = await client2.lookUp('203.0.113.9');
    assert.equal(lookup.verdict, 'drop');
    assert.equal(lookup.holders[0]?.entry?.note, 'sdk');
    const viaControl = (await client2.control('GET', 'blacklist', { ip: '203.0.113.9' })) as unknown as {
      decided_by: string;
    };
    assert.equal(viaControl.decided_by, 'blacklist', 'a GET input goes in the query');
    await assert.rejects(client2.feedPage('nope'), /source: unknown feed "nope"/);
    await client2.control('DELETE', 'blacklist', { ip: '203.0.113.0/24' });
  });

  test('CLI: tables for people, --json for scripts', async () => {
    const me = await palisade(['me'], env);
    assert.equal(me.code, 0, me.stderr);
    assert.match(me.stdout, /SDK User <sdk-\d+@example.com> \(user, account \d+\)/);
    const list = await palisade(['servers', 'list'], env);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^ID\s+LABEL\s+HOSTNAME\s+ONLINE\s+SCORE/m);
    assert.match(list.stdout, /sdk-box/);
    const json = await palisade(['servers', 'show', String(serverId), '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const detail = JSON.parse(json.stdout);
    assert.equal(detail.id, serverId);
    assert.equal(typeof detail.score_components.cpu, 'number');
    // For people: every fact readable, disks with mount, filesystem and size (a check-in has arrived).
    const shown = await palisade(['servers', 'show', String(serverId)], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.doesNotMatch(shown.stdout, /\[object Object\]/);
    assert.match(shown.stdout, /disks=\/ \S+ [\d.]+ [MGT]B/);
    const runs = await palisade(['benchmarks', 'list', String(serverId), '--json'], env);
    assert.deepEqual(JSON.parse(runs.stdout), []);
    const health = await palisade(['agent', 'health', '--json'], env);
    assert.equal(JSON.parse(health.stdout).status, 'ok');
    const metrics = await palisade(['agent', 'metrics', '--json'], env);
    assert.ok('alerter' in JSON.parse(metrics.stdout));
    const lookup = await palisade(['agent', 'control', 'blacklist', '--ip', '192.0.2.44', '--json'], env);
    assert.equal(lookup.code, 0, lookup.stderr);
    assert.equal(JSON.parse(lookup.stdout).summary.split(/[.:]/)[0], 'Not blocked', 'the CLI asks the lookup');
  });

  test('CLI exit codes tell usage, auth, not-found, unreachable and rate limits apart', async () => {
    assert.equal((await palisade(['servers', 'show', '999999'], env)).code, 4);
    assert.equal((await palisade(['servers', 'show', 'abc'], env)).code, 2);
    assert.equal((await palisade(['frobnicate'], env)).code, 2);
    assert.equal((await palisade(['--bogus-flag'], env)).code, 2);
    assert.equal((await palisade(['agent', 'control', '../metrics'], env)).code, 2);
    assert.equal((await palisade(['me'], { ...env, PALISADE_TOKEN: `svc_${'y'.repeat(38)}` })).code, 3);
    assert.equal((await palisade(['agent', 'health'], { ...env, PALISADE_AGENT_KEY: 'agk_wrong' })).code, 3);
    const noUrl = await palisade(['me'], { PALISADE_TOKEN: token });
    assert.equal(noUrl.code, 2);
    assert.match(noUrl.stderr, /--url \(or PALISADE_URL\) is needed/);
    const down = await palisade(['me'], { ...env, PALISADE_URL: 'http://127.0.0.1:9' });
    assert.equal(down.code, 6);
    assert.ok(!down.stderr.includes(token), 'the token is never printed');

    // Spend the token's 120 requests; without retry the CLI says "rate limited" (5), with retry it waits and succeeds.
    const client = new V1Client({ baseUrl: consoleProc.url, token, retryOn429: false });
    let limited = false;
    for (let i = 0; i < 130 && !limited; i += 1) {
      limited = await client.me().then(
        () => false,
        (err: unknown) => err instanceof PalisadeError && err.isRateLimited && (err.retryAfterS ?? 0) >= 1,
      );
    }
    assert.ok(limited, 'the 121st request is refused with Retry-After');
    const refused = await palisade(['me', '--no-retry'], env);
    assert.equal(refused.code, 5);
    assert.match(refused.stderr, /429/);
    const waited = await palisade(['me', '--json'], env);
    assert.equal(waited.code, 0, `with retry the CLI waits for Retry-After: ${waited.stderr}`);
  });

  test('tickets through signed requests: the SDK and the CLI open, list and reply', async () => {
    const client = new SignedClient({ baseUrl: consoleProc.url, key: env.PALISADE_KEY! });
    const ticket = await client.openTicket({ product_id: productId, subject: 'From the SDK', message: 'Signed body' });
    assert.match(ticket.ref, /^T-/);
    assert.equal((await client.me()).email, `sdk-${process.pid}@example.com`);
    const opened = await palisade(
      ['tickets', 'open', '--product', String(productId), '--subject', 'From the CLI', '--message', 'Hello'],
      env,
    );
    assert.equal(opened.code, 0, opened.stderr);
    assert.match(opened.stdout, /^opened T-[0-9A-Z]{6} \(ticket \d+\)/);
    const list = await palisade(['tickets', 'list', '--json'], env);
    const subjects = JSON.parse(list.stdout).map((x: { subject: string }) => x.subject);
    assert.deepEqual(subjects.sort(), ['From the CLI', 'From the SDK']);
    const reply = await palisade(['tickets', 'reply', String(ticket.id), '--message', 'Any news?'], env);
    assert.equal(reply.code, 0, reply.stderr);
    assert.equal((await palisade(['tickets', 'reply', '999999', '--message', 'x'], env)).code, 4);
    const forged = await palisade(['tickets', 'list'], { ...env, PALISADE_KEY: `svck_${'z'.repeat(38)}` });
    assert.equal(forged.code, 3);
    assert.match(forged.stderr, /bad_signature/);
    // The same write twice within one second (the console refuses a signature it already accepted):
    // the SDK signs the second with the next second, so distinct calls never trip the replay guard.
    const frozen = Date.now();
    const sameSecond = new SignedClient({ baseUrl: consoleProc.url, key: env.PALISADE_KEY!, now: () => frozen });
    await sameSecond.reply(ticket.id, 'twice');
    await sameSecond.reply(ticket.id, 'twice');
    const bodies = ((await client.ticket(ticket.id)).messages as { body: string }[]).map((m) => m.body);
    assert.equal(bodies.filter((b) => b === 'twice').length, 2);
    // A clock far off: the error says by how much.
    const skewed = new SignedClient({
      baseUrl: consoleProc.url,
      key: env.PALISADE_KEY!,
      now: () => Date.now() - 3600_000,
    });
    await assert.rejects(
      skewed.tickets(),
      (err: unknown) =>
        err instanceof PalisadeError && err.reason === 'stale' && /behind the console/.test(err.hint ?? ''),
    );
  });

  test('--team: one person in two teams, a token and a key per team; the CLI picks them and names a mismatch', async () => {
    const home = JSON.parse(
      (await palisade(['me', '--json'], { ...env, PALISADE_TOKEN: await tokenIn(undefined) })).stdout,
    ).team;
    assert.deepEqual(home.name, 'SDK User');
    const acme = (await post('/api/teams', { name: 'Acme' }, cookie)).json.data.team!.id;
    const inAcme = { 'x-palisade-team': String(acme) };
    const acmeToken = await tokenIn(acme);
    const acmeKey = (await post('/api/keys', { name: 'acme' }, cookie, inAcme)).json.data.key as unknown as string;
    const homeToken = await tokenIn(undefined);

    // The SDK sends the team on every request; a token of another team is the console's 404.
    const sdk = new V1Client({ baseUrl: consoleProc.url, token: acmeToken, team: acme });
    assert.deepEqual((await sdk.me()).team, { id: acme, name: 'Acme', role: 'owner' });
    assert.deepEqual(await sdk.servers(), []);
    await assert.rejects(
      new V1Client({ baseUrl: consoleProc.url, token: homeToken, team: acme }).me(),
      (err: unknown) => err instanceof PalisadeError && err.isNotFound,
    );
    assert.throws(() => new V1Client({ baseUrl: consoleProc.url, token: acmeToken, team: 0 }), /team must be/);
    const signed = new SignedClient({ baseUrl: consoleProc.url, key: acmeKey, team: acme });
    assert.deepEqual((await signed.me()).team, { id: acme, name: 'Acme', role: 'owner' });

    // Profiles per team in the config file: --team picks one by name or by id, and its credentials.
    const file = join(dir.path, 'teams.json');
    writeFileSync(
      file,
      JSON.stringify({
        url: consoleProc.url,
        token: homeToken,
        teams: { acme: { id: acme, token: acmeToken, key: acmeKey }, home: { id: home.id, token: homeToken } },
      }),
      { mode: 0o600 },
    );
    const config = { PALISADE_CONFIG: file };
    const byName = await palisade(['me', '--team', 'acme'], config);
    assert.equal(byName.code, 0, byName.stderr);
    assert.match(byName.stdout, new RegExp(`^team ${acme} \\(Acme\\), role owner$`, 'm'));
    const byId = await palisade(['servers', 'list', '--json', '--team', String(home.id)], config);
    assert.equal(byId.code, 0, byId.stderr);
    assert.deepEqual(
      JSON.parse(byId.stdout).map((x: { id: number }) => x.id),
      [serverId],
      'the home profile: its server',
    );
    const byEnv = await palisade(['servers', 'list', '--json'], { ...config, PALISADE_TEAM: 'acme' });
    assert.deepEqual(JSON.parse(byEnv.stdout), [], 'Acme has no servers');
    const signedList = await palisade(['tickets', 'list', '--json', '--team', 'acme'], config);
    assert.equal(signedList.code, 0, signedList.stderr);
    assert.deepEqual(JSON.parse(signedList.stdout), [], "Acme's key sees Acme's tickets: none");
    const noKey = await palisade(['tickets', 'list', '--team', 'home'], { ...config, PALISADE_KEY: env.PALISADE_KEY! });
    assert.equal(noKey.code, 2, 'a profile without a key does not borrow the environment’s');
    assert.match(noKey.stderr, /--key \(or "key" in the profile teams\.home of /);
    const unknown = await palisade(['me', '--team', 'nope'], config);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /--team nope: expected a team id \(a positive integer\) or a profile of .* \(acme, home\)/,
    );

    // A credential of another team: the not-found exit code and a message naming both teams.
    const wrong = await palisade(['me', '--team', String(acme)], { ...env, PALISADE_TOKEN: homeToken });
    assert.equal(wrong.code, 4, wrong.stderr);
    assert.equal(wrong.stderr, `palisade: this token belongs to team ${home.id} (SDK User), not team ${acme}\n`);
    writeFileSync(
      file,
      JSON.stringify({ url: consoleProc.url, teams: { acme: { id: acme, token: homeToken, key: env.PALISADE_KEY } } }),
    );
    const wrongProfile = await palisade(['servers', 'list', '--team', 'acme'], config);
    assert.equal(wrongProfile.code, 4);
    assert.match(
      wrongProfile.stderr,
      new RegExp(`this token belongs to team ${home.id} \\(SDK User\\), not team ${acme} \\(profile acme\\)`),
    );
    const wrongKey = await palisade(['tickets', 'list', '--team', 'acme'], config);
    assert.equal(wrongKey.code, 4);
    assert.match(
      wrongKey.stderr,
      new RegExp(`this signing key belongs to team ${home.id} \\(SDK User\\), not team ${acme}`),
    );
    // A 404 in the right team (here the config file's default team) stays what it is.
    writeFileSync(
      file,
      JSON.stringify({ url: consoleProc.url, team: 'acme', teams: { acme: { id: acme, token: acmeToken } } }),
    );
    const byDefault = await palisade(['servers', 'show', '999999'], config);
    assert.equal(byDefault.code, 4);
    assert.doesNotMatch(byDefault.stderr, /belongs to/, 'the token is in the team: the server is what is missing');
  });

  /** A fresh token (this test's own rate limit) made while acting in `team`, or in the session's own. */
  async function tokenIn(team: number | undefined): Promise<string> {
    return (
      await post(
        '/api/tokens',
        { name: `team-${team ?? 'home'}` },
        cookie,
        team ? { 'x-palisade-team': String(team) } : {},
      )
    ).json.data.token;
  }

  test('a config file with secrets must be private (0600)', async () => {
    const file = join(dir.path, 'palisade.json');
    writeFileSync(file, JSON.stringify({ url: consoleProc.url, token }));
    chmodSync(file, 0o644);
    const open = await palisade(['servers', 'list', '--config', file]);
    assert.equal(open.code, 2);
    assert.match(open.stderr, /readable by others; .*chmod 600/);
    chmodSync(file, 0o600);
    const ok = await palisade(['servers', 'list', '--json', '--config', file]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout)[0].id, serverId);
  });
});

test('palisade --version and -V print the SDK package version and exit 0, through the installed bin', async () => {
  const bin = fileURLToPath(new URL('../../packages/sdk/bin/palisade.js', import.meta.url));
  const { version } = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../packages/sdk/package.json', import.meta.url)), 'utf8'),
  );
  for (const flag of ['--version', '-V']) {
    const res = await runCli(bin, [flag], { HOME: dir.path });
    assert.equal(res.code, 0, `${flag}: ${res.stderr}`);
    assert.equal(res.stdout, `${version}\n`, flag);
    assert.equal(res.stderr, '', flag);
  }
  const help = await runCli(bin, ['--help'], { HOME: dir.path });
  assert.match(help.stdout, /-V, --version/);
});
