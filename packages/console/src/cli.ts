#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError } from 'commander';
import { createBoundaries, createServices } from './app.js';
import { ConfigError, loadConfig, PERMISSIONS, type Permission } from './config.js';
import { openDatabase } from './db/database.js';
import { AppError } from './errors.js';
import { startConsole } from './server.js';

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

async function serve() {
  const config = loadConfig(process.env);
  const running = await startConsole(config, print);
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    print(`${signal}: shutting down`);
    running.close().then(
      () => process.exit(0),
      (err) => fail(err),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Runs one admin action against the configured database. */
async function withServices<T>(action: (services: ReturnType<typeof createServices>) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const database = await openDatabase(config);
  try {
    const boundaries = createBoundaries(config);
    try {
      return await action(createServices({ db: database.db, config, clock: Date.now, ...boundaries }));
    } finally {
      boundaries.outbound.close();
    }
  } finally {
    await database.close();
  }
}

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
  .showHelpAfterError();

program.command('serve', { isDefault: true }).description('run the console (the default)').action(serve);

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
        `${item.id}\t${item.sku}\t${item.name}\t${item.price_cents} ${item.currency}/${item.interval}\t${item.server_limit} servers`,
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
  .action(
    async (o: {
      sku: string;
      name: string;
      priceCents: number;
      serverLimit: number;
      description: string;
      currency: string;
      interval: string;
    }) => {
      if (o.interval !== 'month' && o.interval !== 'year') throw new AppError(400, 'interval: month or year');
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
        }),
      );
      print(`Catalog item ${item.id} (${item.sku}) added.`);
    },
  );

program.parseAsync(process.argv).catch(fail);
