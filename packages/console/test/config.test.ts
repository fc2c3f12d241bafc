import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { ConfigError, loadConfig, proxyTrust } from '../src/config.js';

test('defaults give a local console on 127.0.0.1:8080 with SQLite under ./data', () => {
  const config = loadConfig({}, '/srv/palisade');
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.dataDir, '/srv/palisade/data');
  assert.equal(config.databaseUrl, null);
  assert.deepEqual(config.defaultPermissions, ['control.read', 'control.edit']);
  assert.equal(config.passwordCost, 17, 'scrypt N=2^17 unless PALISADE_PASSWORD_COST says otherwise');
  assert.ok(Object.isFrozen(config));
});

test('each bad variable is named in the error', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PALISADE_PORT: 'eighty' }, 'PALISADE_PORT'],
    [{ PALISADE_PORT: '70000' }, 'PALISADE_PORT'],
    [{ PALISADE_DATABASE_URL: 'mysql://x' }, 'PALISADE_DATABASE_URL'],
    [{ PALISADE_REDIS_URL: 'localhost:6379' }, 'PALISADE_REDIS_URL'],
    [{ PALISADE_SECRET_KEY: 'short' }, 'PALISADE_SECRET_KEY'],
    [{ PALISADE_TRUST_PROXY: 'not an ip' }, 'PALISADE_TRUST_PROXY'],
    [{ PALISADE_ALLOW_PRIVATE_TARGETS: 'maybe' }, 'PALISADE_ALLOW_PRIVATE_TARGETS'],
    [{ PALISADE_DEFAULT_PERMISSIONS: 'control.read,root' }, 'PALISADE_DEFAULT_PERMISSIONS'],
    [{ PALISADE_PASSWORD_COST: '11' }, 'PALISADE_PASSWORD_COST'],
    [{ PALISADE_PASSWORD_COST: '19' }, 'PALISADE_PASSWORD_COST'],
    [{ PALISADE_LOG_LEVEL: 'loud' }, 'PALISADE_LOG_LEVEL'],
    [{ PALISADE_PUBLIC_URL: 'console.example.com' }, 'PALISADE_PUBLIC_URL'],
    [{ PALISADE_SMTP_FROM: 'alerts' }, 'PALISADE_SMTP_FROM'],
    [{ PALISADE_SMTP_FROM: 'alerts@example.com\r\nBcc: x@example.com' }, 'PALISADE_SMTP_FROM'],
    [{ PALISADE_SMTP_FROM: 'Ops <alerts@example.com>, Two <b@example.com>' }, 'PALISADE_SMTP_FROM'],
    [{ PALISADE_DATABASE_SCHEMA: 'Robert"); DROP' }, 'PALISADE_DATABASE_SCHEMA'],
  ];
  for (const [env, name] of cases) {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => err instanceof ConfigError && err.variable === name && err.message.startsWith(`${name}: `),
      name,
    );
  }
});

test('lists and flags are parsed', () => {
  const config = loadConfig({
    PALISADE_TRUST_PROXY: '10.0.0.1, 192.168.0.0/16',
    PALISADE_ALLOW_PRIVATE_TARGETS: 'on',
    PALISADE_DEFAULT_PERMISSIONS: 'control.read',
    PALISADE_SECRET_KEY: 'ab'.repeat(32),
    PALISADE_PUBLIC_URL: 'https://console.example.com/',
  });
  assert.deepEqual(config.trustProxy, ['10.0.0.1', '192.168.0.0/16']);
  assert.equal(config.allowPrivateTargets, true);
  assert.deepEqual(config.defaultPermissions, ['control.read']);
  assert.equal(config.secretKey?.length, 32);
  assert.equal(config.publicUrl, 'https://console.example.com');
  assert.deepEqual(loadConfig({ PALISADE_DEFAULT_PERMISSIONS: '' }).defaultPermissions, []);
});

test('PALISADE_TRUST_PROXY is parsed strictly: each refusal names the variable, the entry and what is expected', () => {
  const refused = [
    'abc',
    'not an ip',
    '1.2.3',
    '010.0.0.1',
    '0x7f.0.0.1',
    '10.0.0.1/33',
    '10.0.0.0/0',
    '::1/129',
    '10.0.0.0/255.0.0.0',
    '10.0.0.1/24x',
    'fe80::1%eth0',
    '10.0.0.1,',
    '10.0.0.1,,10.0.0.2',
    'localhost',
    '2',
    'yes',
  ];
  for (const value of refused) {
    assert.throws(
      () => loadConfig({ PALISADE_TRUST_PROXY: value }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.variable === 'PALISADE_TRUST_PROXY' &&
        err.message.startsWith('PALISADE_TRUST_PROXY: ') &&
        /expected/.test(err.message),
      value,
    );
  }
  assert.throws(
    () => loadConfig({ PALISADE_TRUST_PROXY: '127.0.0.1,abc' }),
    /PALISADE_TRUST_PROXY: "abc" is not an IP address or CIDR; expected true, false, or a comma-separated list/,
  );
});

test('PALISADE_TRUST_PROXY takes what Fastify takes: true, false, IPs, CIDRs and named ranges', () => {
  const accepted: [string, true | string[]][] = [
    ['', []],
    ['false', []],
    [' FALSE ', []],
    ['true', true],
    ['True', true],
    ['127.0.0.1', ['127.0.0.1']],
    [
      ' 10.0.0.1 , 192.168.0.0/16,::1, ::ffff:10.0.0.1, fd00::/8, 10.0.0.0/32, loopback,linklocal,uniquelocal',
      [
        '10.0.0.1',
        '192.168.0.0/16',
        '::1',
        '::ffff:10.0.0.1',
        'fd00::/8',
        '10.0.0.0/32',
        'loopback',
        'linklocal',
        'uniquelocal',
      ],
    ],
  ];
  for (const [value, expected] of accepted) {
    const { trustProxy } = loadConfig({ PALISADE_TRUST_PROXY: value });
    assert.deepEqual(trustProxy, expected, value);
    // What the config accepts Fastify starts with (it throws "invalid IP address" on anything else).
    const app = Fastify({ trustProxy: proxyTrust(trustProxy) });
    void app.close();
  }
  const trust = proxyTrust(loadConfig({ PALISADE_TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy);
  assert.ok(trust !== false);
  assert.equal(trust('10.9.9.9', 0), true);
  assert.equal(trust('::1', 0), true);
  assert.equal(trust('192.168.1.1', 0), false);
  assert.equal(proxyTrust(loadConfig({}).trustProxy), false, 'unset: no proxy is trusted');
  const all = proxyTrust(true);
  assert.ok(all !== false);
  assert.equal(all('203.0.113.9', 3), true, 'true: every peer is a proxy');
});

test('single sign-on takes the issuer, client id and secret together, with PALISADE_PUBLIC_URL', () => {
  const sso = {
    PALISADE_PUBLIC_URL: 'https://console.example.com/',
    PALISADE_OIDC_ISSUER: 'https://auth.example.com/realms/ops',
    PALISADE_OIDC_CLIENT_ID: 'palisade',
    PALISADE_OIDC_CLIENT_SECRET: 'the secret',
  };
  assert.equal(loadConfig({}).oidc, null);
  const config = loadConfig({
    ...sso,
    PALISADE_OIDC_ALLOWED_DOMAINS: 'Example.com, example.org',
    PALISADE_OIDC_TEAM_MAP: 'ops-admins=7:admin, ops=7:operator,auditors=12:viewer',
  });
  assert.deepEqual(config.oidc, {
    issuer: 'https://auth.example.com/realms/ops',
    clientId: 'palisade',
    clientSecret: 'the secret',
    name: 'single sign-on',
    allowedDomains: ['example.com', 'example.org'],
    groupsClaim: 'groups',
    teamMap: [
      { group: 'ops-admins', teamId: 7, role: 'admin' },
      { group: 'ops', teamId: 7, role: 'operator' },
      { group: 'auditors', teamId: 12, role: 'viewer' },
    ],
    redirectUri: 'https://console.example.com/api/auth/oidc/callback',
  });
  const refusals: [Record<string, string>, string, RegExp][] = [
    [{ ...sso, PALISADE_OIDC_CLIENT_SECRET: '' }, 'PALISADE_OIDC_CLIENT_SECRET', /needed with PALISADE_OIDC_ISSUER/],
    [{ PALISADE_OIDC_CLIENT_ID: 'palisade' }, 'PALISADE_OIDC_ISSUER', /needed with PALISADE_OIDC_CLIENT_ID/],
    [{ ...sso, PALISADE_PUBLIC_URL: '' }, 'PALISADE_PUBLIC_URL', /single sign-on/],
    [
      { ...sso, PALISADE_OIDC_ISSUER: 'http://auth.example.com' },
      'PALISADE_OIDC_ISSUER',
      /http:\/\/ only for localhost/,
    ],
    [{ ...sso, PALISADE_OIDC_TEAM_MAP: 'ops=7:root' }, 'PALISADE_OIDC_TEAM_MAP', /"ops=7:root": "root" is not a role/],
    [{ ...sso, PALISADE_OIDC_TEAM_MAP: 'ops=seven:admin' }, 'PALISADE_OIDC_TEAM_MAP', /expected group=team id:role/],
    [{ ...sso, PALISADE_OIDC_ALLOWED_DOMAINS: 'example.com,@bad' }, 'PALISADE_OIDC_ALLOWED_DOMAINS', /e-mail domains/],
  ];
  for (const [env, name, message] of refusals) {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => err instanceof ConfigError && err.variable === name && message.test(err.message),
      name,
    );
  }
});
