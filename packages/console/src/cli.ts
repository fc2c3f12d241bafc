#!/usr/bin/env node
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError } from 'commander';
import type { Services } from './app.js';
import { backup, restore } from './backup/index.js';
import { CONSOLE_VERSION, ConfigError, loadConfig, PERMISSIONS, type Permission } from './config.js';
import { AppError } from './errors.js';
import { limitHeapGrowth } from './heap.js';
import { startConsole, withDatabase } from './server.js';
import { PLAN_CAPABILITIES, type PlanCapability } from './services/catalog.service.js';
import { runPrimary, serveAsWorker } from './workers.js';

const print = (line: string) => process.stdout.write(`${line}\n`);

function fail(err: unknown): never {
  if (err instanceof ConfigError) process.stderr.write(`palisade-console: bad setting ${err.message}\n`);
  else if (err instanceof AppError) process.stderr.write(`palisade-console: ${err.message}\n`);
  else {
    const e = err as NodeJS.ErrnoException;
    const hint = e.code === 'EADDRINUSE' ? ' (the port is taken: set PALISADE_PORT to a free one)' : '';
    process.stderr.write(`palisade-console: ${e.message ?? String(err)}${hint}\n`);
  }
  process.exit(1);
}

async function serve(opts: { workers?: string }) {
  limitHeapGrowth();
  // --workers goes through the same check as PALISADE_WORKERS (several need PostgreSQL).
  const config = loadConfig(
    opts.workers === undefined ? process.env : { ...process.env, PALISADE_WORKERS: opts.workers },
  );
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, print);
  const worker = cluster.isWorker;
  const running = await startConsole(config, print, { worker });
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    print(worker ? `worker ${process.pid}: ${signal}: shutting down` : `${signal}: shutting down`);
    running.close().then(
      () => process.exit(0),
      (err) => fail(err),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (worker) serveAsWorker(running, stop);
}

/** Runs one admin action against the configured database. */
const withServices = <T>(action: (services: Services) => Promise<T>) => withDatabase(loadConfig(process.env), action);

function permission(value: string): Permission {
  if (!(PERMISSIONS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`expected one of ${PERMISSIONS.join(', ')}`);
  }
  return value as Permission;
}

function integer(value: string): number {
  if (!/^\d{1,12}$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

const program = new Command('palisade-console')
  .description('The Palisade console. Settings come from PALISADE_* environment variables (see docs/console.md).')
  .version(CONSOLE_VERSION, '-V, --version', "print this console's version")
  .showHelpAfterError();

program
  .command('serve', { isDefault: true })
  .description('run the console (the default)')
  .option('--workers <n>', 'worker processes sharing the port (PALISADE_WORKERS; more than 1 needs PostgreSQL)')
  .action(serve);

program
  .command('backup')
  .description(
    'write the database and the secret key to FILE (mode 0600; it decrypts every stored agent key, so keep it as secret); the console may keep running',
  )
  .argument('<file>')
  .option('--force', 'replace FILE when it exists (never written through a symlink)')
  .action(async (file: string, opts: { force?: boolean }) => {
    print(await backup(loadConfig(process.env), file, opts.force === true));
  });

program
  .command('restore')
  .description(
    "restore FILE into an empty data directory or PostgreSQL schema, then migrate it to this console's version",
  )
  .argument('<file>')
  .action(async (file: string) => {
    print(await restore(loadConfig(process.env), file));
  });

const admin = program.command('admin').description('operator tasks on the console database');

admin
  .command('create-admin')
  .description('create an admin account; prints a generated password unless --password-stdin is given')
  .requiredOption('--email <email>', 'the admin email')
  .option('--name <name>', 'display name', 'Administrator')
  .option('--password-stdin', 'read the password from standard input')
  .action(async (opts: { email: string; name: string; passwordStdin?: boolean }) => {
    let password = randomBytes(18).toString('base64url');
    if (opts.passwordStdin) {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      password = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/\r?\n$/, '');
      if (password.length < 8 || password.length > 256) throw new AppError(400, 'password: 8 to 256 characters');
    }
    await withServices((s) => s.accounts.create({ email: opts.email, name: opts.name, password, role: 'admin' }));
    print(`Admin ${opts.email} created.${opts.passwordStdin ? '' : ` Password (shown once): ${password}`}`);
  });

for (const [name, disabled] of [
  ['disable', true],
  ['enable', false],
] as const) {
  admin
    .command(name)
    .description(`${name} an account${disabled ? '; its sessions and tokens stop working at once' : ''}`)
    .argument('<email>')
    .action(async (email: string) => {
      await withServices((s) => s.accounts.setDisabled(email, disabled));
      print(`Account ${email} ${name}d.`);
    });
}

for (const [name, granted] of [
  ['grant', true],
  ['revoke', false],
] as const) {
  admin
    .command(name)
    .description(`${name} a permission (${PERMISSIONS.join(', ')})`)
    .argument('<email>')
    .argument('<permission>', 'control.read or control.edit', permission)
    .action(async (email: string, perm: Permission) => {
      const now = await withServices((s) => s.accounts.setPermission(email, perm, granted));
      print(`Account ${email} now has: ${now.join(', ') || 'no permissions'}.`);
    });
}

const catalog = admin.command('catalog').description('the product catalog');
catalog
  .command('list')
  .description('list catalog items')
  .action(async () => {
    for (const item of await withServices((s) => s.catalog.catalog())) {
      print(
        `${item.id}\t${item.sku}\t${item.name}\t${item.price_cents} ${item.currency}/${item.interval}\t${item.server_limit} servers\tincludes: ${item.includes.join(', ') || 'nothing extra'}`,
      );
    }
  });
catalog
  .command('add')
  .description('add a catalog item')
  .requiredOption('--sku <sku>')
  .requiredOption('--name <name>')
  .requiredOption('--price-cents <n>', 'price per interval in cents', integer)
  .requiredOption('--server-limit <n>', 'servers allowed', integer)
  .option('--description <text>', '', '')
  .option('--currency <code>', 'ISO currency', 'USD')
  .option('--interval <interval>', 'month or year', 'month')
  .option(
    '--include <capability...>',
    `what the plan includes that the console enforces: ${PLAN_CAPABILITIES.join(', ')}`,
    [],
  )
  .action(
    async (o: {
      sku: string;
      name: string;
      priceCents: number;
      serverLimit: number;
      description: string;
      currency: string;
      interval: string;
      include: string[];
    }) => {
      if (o.interval !== 'month' && o.interval !== 'year') throw new AppError(400, 'interval: month or year');
      const unknown = o.include.filter((c) => !(PLAN_CAPABILITIES as readonly string[]).includes(c));
      if (unknown.length > 0)
        throw new AppError(400, `include: expected ${PLAN_CAPABILITIES.join(' or ')}, got ${unknown.join(', ')}`);
      const item = await withServices((s) =>
        s.catalog.addCatalogItem({
          sku: o.sku,
          name: o.name,
          description: o.description,
          price_cents: o.priceCents,
          currency: o.currency,
          interval: o.interval as 'month',
          server_limit: o.serverLimit,
          features: [],
          includes: o.include as PlanCapability[],
        }),
      );
      print(`Catalog item ${item.id} (${item.sku}) added.`);
    },
  );

program
  .command('release-key')
  .description('signed releases: `release-key new --out FILE` makes a key for npm run package --sign-key')
  .command('new')
  .description('write a new Ed25519 release private key to FILE (0600, never overwritten); print its public key')
  .requiredOption('--out <file>', 'where the private key goes (keep it off the console)')
  .action(async (o: { out: string }) => {
    const { newReleaseKey } = await import('./release-key.js');
    print(`Release private key written to ${o.out}. Public key: ${newReleaseKey(o.out)}`);
  });

program.parseAsync(process.argv).catch(fail);
