#!/usr/bin/env node
// `npm run package`: the installable artifacts, into dist/packages/ or `--out DIR` (emptied first)
// (docs/agent.md#install, docs/decisions.md "Packaging"). Needs `npm run build` first (the npm
// script runs it).
//   palisade-agent-<v>.mjs              the agent in one ESM file, for hosts with Node >= 20.19
//   palisade-agent-<v>-geo.tar          the geo country ranges to unpack beside that file
//   palisade-agent-<v>-linux-x64        the agent as one executable (Node SEA, geo ranges inside)
//   palisade-agent_<v>_amd64.deb        that executable, its systemd units (the agent, the root
//                                       updater and its path unit), config and a system user
//   palisade-console-<v>.tgz            the console and its dashboard, for `npm install -g`
//   palisade-console-<v>-linux-x64.tar.gz  the console as one executable and its SQLite addon
//   palisade-console_<v>_amd64.deb      those two, a systemd unit, settings and a system user
//   palisade-sdk-<v>.tgz                the `palisade` CLI and SDK, for `npm install -g`
//   SHA256SUMS
//   SHA256SUMS.sig, release.pub          with --sign-key FILE (or PALISADE_SIGN_KEY): the Ed25519
//                                        signature of SHA256SUMS and the public key (base64)
// `--agent-version V` builds the agent files as version V (a hotfix served by an older console, or
// the versions an update test moves between); `--agent-only` builds the .mjs, the geo tar and the
// executable only, without the .deb and the npm tarballs.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { rolldown } from 'rolldown';
import { buildConsoleNative } from './console-sea.mjs';
import { changelog, manPage, shlibsDepends } from './debian.mjs';
import { singleExecutable } from './sea.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values: options } = parseArgs({
  options: {
    out: { type: 'string' },
    'sign-key': { type: 'string' },
    'agent-version': { type: 'string' },
    'agent-only': { type: 'boolean' },
  },
});
const out = resolve(options.out ?? join(root, 'dist', 'packages'));
// The staging directory, made fresh each run (two builds may run at once, into two outputs).
const work = mkdtempSync(join(tmpdir(), 'palisade-package-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const require = createRequire(import.meta.url);

const readJson = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));
const releaseVersion = readJson('package.json').version;
const version = options['agent-version'] ?? releaseVersion;
// The same form packages/protocol/src/enrolment.ts's install line and the console accept in a name.
if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.]{1,32})?$/.test(version))
  fail(`--agent-version ${version}: expected a version such as 0.2.0 or 0.2.0-rc.1`);
const started = Date.now();
const step = (what) => console.log(`[package ${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], ...opts });

function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}

for (const pkg of ['protocol', 'agent', 'console', 'sdk', 'web']) {
  const v = readJson(`packages/${pkg}/package.json`).version;
  if (v !== releaseVersion)
    fail(`packages/${pkg}/package.json has version ${v}, the root ${releaseVersion}: make them equal`);
}
for (const built of [
  'packages/agent/dist/src/cli.js',
  'packages/console/dist/src/cli.js',
  'packages/web/dist/index.html',
])
  if (!existsSync(join(root, built))) fail(`${built} is missing: run \`npm run build\` first`);
if (process.platform !== 'linux' || process.arch !== 'x64')
  fail('the executable and the .deb are built on linux-x64 only');
for (const [tool, from] of [
  ['strip', 'binutils'],
  ['readelf', 'binutils'],
  ['tar', 'tar'],
  ['dpkg-deb', 'dpkg'],
])
  if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0)
    fail(`\`${tool}\` is missing: install ${from}`);

// Reproducible builds (reproducible-builds.org): every date in every artifact is this one, so one
// commit built twice gives the same bytes. The last commit's time unless the caller sets it.
const epoch = Number(
  process.env.SOURCE_DATE_EPOCH ??
    spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).stdout?.trim(),
);
if (!Number.isSafeInteger(epoch) || epoch <= 0)
  fail('no SOURCE_DATE_EPOCH and no git commit to take it from: set SOURCE_DATE_EPOCH=<seconds since 1970>');
process.env.SOURCE_DATE_EPOCH = String(epoch); // dpkg-deb dates its ar members with it

/** Every file and directory under `dir` (and `dir` itself) dated SOURCE_DATE_EPOCH. */
function dateTree(dir) {
  for (const p of ['', ...readdirSync(dir, { recursive: true })]) {
    if (lstatSync(join(dir, p)).isSymbolicLink()) fail(`${join(dir, p)}: no links in a package`);
    utimesSync(join(dir, p), epoch, epoch);
  }
}

// The release key (`palisade-console release-key new`), read before anything is built so a wrong
// one fails at once. Ed25519 signatures are deterministic: a signed build stays reproducible.
const signKeyFile = options['sign-key'] ?? process.env.PALISADE_SIGN_KEY;
let signKey = null;
if (signKeyFile !== undefined) {
  try {
    signKey = createPrivateKey(readFileSync(signKeyFile));
  } catch (err) {
    fail(`--sign-key ${signKeyFile}: ${err.message}`);
  }
  if (signKey.asymmetricKeyType !== 'ed25519')
    fail(
      `--sign-key ${signKeyFile}: an Ed25519 key is expected (palisade-console release-key new), not ${signKey.asymmetricKeyType}`,
    );
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// --- The agent in one file ------------------------------------------------------------------
// The agent loads some CommonJS packages with `createRequire(import.meta.url)('x')` (cheaper than
// `import` from dist/, see packages/protocol/src/networks.ts); a bundler does not follow that, so it
// becomes `require('x')`.
const inlineCreateRequire = {
  name: 'palisade-inline-create-require',
  transform(code, id) {
    if (!id.includes('/packages/agent/dist/') && !id.includes('/protocol/dist/')) return null;
    let next = code.replaceAll('createRequire(import.meta.url)(', 'require(');
    if (id.endsWith('/packages/agent/dist/src/version.js')) {
      next = next.replace(`AGENT_VERSION = '${releaseVersion}'`, `AGENT_VERSION = '${version}'`);
      if (!next.includes(`AGENT_VERSION = '${version}'`))
        fail(`${id} does not say AGENT_VERSION = '${releaseVersion}'`);
    }
    return next === code ? null : { code: next };
  },
};

// ws (the agent's outbound link) tries the optional native add-ons bufferutil and utf-8-validate
// inside a try/catch and uses its own JavaScript without them: the bundle carries neither, so
// loading them throws there, as a missing module would.
const ABSENT = '\0palisade-absent:';
const wsOptionalAddons = {
  name: 'palisade-ws-optional-addons',
  resolveId: (id) => (id === 'bufferutil' || id === 'utf-8-validate' ? `${ABSENT}${id}` : null),
  load: (id) =>
    id.startsWith(ABSENT)
      ? `module.exports = (() => { throw new Error('${id.slice(ABSENT.length)} is not bundled'); })();`
      : null,
};

step('agent: bundling packages/agent/dist/src/cli.js with rolldown');
const agentBundle = await rolldown({
  input: join(root, 'packages/agent/dist/src/cli.js'),
  platform: 'node',
  plugins: [inlineCreateRequire, wsOptionalAddons],
  logLevel: 'warn',
});
const mjs = join(out, `palisade-agent-${version}.mjs`);
const cjs = join(work, 'palisade-agent.cjs');
// V8 keeps a script's whole source in memory; without comments and layout and with non-ASCII
// characters escaped (one byte a character instead of two) it holds 0.6 MB instead of 1.8 MB.
// Names are kept, so stack traces still read (docs/performance.md, "Agent memory").
const minify = { compress: false, mangle: false, codegen: { removeWhitespace: true, asciiOnly: true } };
await agentBundle.write({ file: mjs, format: 'esm', codeSplitting: false, minify });
// Node 20's single executable needs a CommonJS main script: the same bundle, written as CommonJS.
await agentBundle.write({ file: cjs, format: 'cjs', codeSplitting: false, minify });
await agentBundle.close();
chmodSync(mjs, 0o755);
for (const file of [mjs, cjs]) {
  const text = readFileSync(file, 'utf8');
  // Anything still loaded from a file at run time would fail in the executable, whose require()
  // knows built-in modules only.
  const external = [...text.matchAll(/\b(?:require|__require)\(["']([^"']+)["']\)/g)]
    .map((m) => m[1])
    .filter((id) => !isBuiltin(id));
  if (text.includes('createRequire(import.meta.url)(') || text.includes('"./cpu-worker.js"') || external.length > 0)
    fail(`${file} still loads files at run time (${external.join(', ')}); see inlineCreateRequire`);
}

step('agent: gzipping the geo country ranges');
const geoPackage = dirname(
  require.resolve('@ip-location-db/geo-whois-asn-country/package.json', { paths: [join(root, 'packages/agent')] }),
);
const geoDir = join(work, 'palisade-agent-geo');
mkdirSync(geoDir);
const geoAssets = {};
for (const file of ['geo-whois-asn-country-ipv4.csv', 'geo-whois-asn-country-ipv6.csv']) {
  const gz = join(geoDir, `${file}.gz`);
  writeFileSync(gz, gzipSync(readFileSync(join(geoPackage, file)), { level: 9 }));
  geoAssets[`${file}.gz`] = gz;
}
copyFileSync(join(geoPackage, 'NRO_LICENSE'), join(geoDir, 'NRO_LICENSE'));
for (const f of readdirSync(geoDir)) chmodSync(join(geoDir, f), 0o644);
chmodSync(geoDir, 0o755);
dateTree(geoDir);
// The same members, order, dates, owners and modes whoever builds it, wherever, whenever.
const reproducibleTar = ['--sort=name', `--mtime=@${epoch}`, '--owner=0', '--group=0', '--numeric-owner'];
run('tar', [
  ...reproducibleTar,
  '--format=gnu',
  '-cf',
  join(out, `palisade-agent-${version}-geo.tar`),
  '-C',
  work,
  'palisade-agent-geo',
]);

// --- The single executable (Node SEA) --------------------------------------------------------
step(`agent: single executable with Node ${process.version}`);
const exe = join(out, `palisade-agent-${version}-linux-x64`);
singleExecutable({
  stage: work,
  main: 'palisade-agent.cjs',
  assets: Object.fromEntries(Object.entries(geoAssets).map(([name, path]) => [name, path.slice(work.length + 1)])),
  exe,
  version,
  what: 'the agent executable',
  run,
  fail,
});

// --- The Debian package ------------------------------------------------------------------------
if (options['agent-only']) {
  sumsAndSignature();
  process.exit(0);
}
step('agent: Debian package');
const deb = join(work, 'deb');
const debFile = (path, text, mode = 0o644) => {
  mkdirSync(dirname(join(deb, path)), { recursive: true });
  writeFileSync(join(deb, path), text);
  chmodSync(join(deb, path), mode);
};
mkdirSync(join(deb, 'usr/bin'), { recursive: true });
copyFileSync(exe, join(deb, 'usr/bin/palisade-agent'));
chmodSync(join(deb, 'usr/bin/palisade-agent'), 0o755);
const packaging = join(root, 'packages/agent/packaging');
const control = readFileSync(join(packaging, 'control'), 'utf8');
const field = (name) => new RegExp(`^${name}: (.*)$`, 'm').exec(control)[1];
const gzip = (text) => gzipSync(text, { level: 9 }); // no name, time 0: what `gzip -9n` writes
debFile(
  'usr/share/doc/palisade-agent/changelog.gz',
  gzip(changelog({ name: 'palisade-agent', version, maintainer: field('Maintainer'), epoch })),
);
const help = (args) => run(exe, args, { env: { PATH: '/usr/bin:/bin' } }).toString();
debFile(
  'usr/share/man/man8/palisade-agent.8.gz',
  gzip(manPage({ help, version, epoch, summary: field('Description') })),
);
debFile('usr/share/lintian/overrides/palisade-agent', readFileSync(join(packaging, 'lintian-overrides')));
for (const unit of ['palisade-agent.service', 'palisade-agent-update.path', 'palisade-agent-update.service'])
  debFile(`lib/systemd/system/${unit}`, readFileSync(join(packaging, unit)));
debFile('etc/palisade-agent/agent.conf', readFileSync(join(root, 'packages/agent/examples/agent.conf')), 0o600);
chmodSync(join(deb, 'etc/palisade-agent'), 0o700);
mkdirSync(join(deb, 'var/lib/palisade-agent'), { recursive: true });
chmodSync(join(deb, 'var/lib/palisade-agent'), 0o700);
debFile('usr/share/doc/palisade-agent/copyright', readFileSync(join(packaging, 'copyright')));
debFile('usr/share/doc/palisade-agent/agent.md', readFileSync(join(root, 'docs/agent.md')));
for (const script of ['preinst', 'postinst', 'prerm', 'postrm'])
  debFile(`DEBIAN/${script}`, readFileSync(join(packaging, script)), 0o755);
debFile('DEBIAN/conffiles', '/etc/palisade-agent/agent.conf\n');
// What `debsums` and `dpkg --verify` check against; conffiles are left out, as dh_md5sums does.
const md5sums = readdirSync(deb, { recursive: true })
  .filter((p) => !p.startsWith('DEBIAN') && !p.startsWith('etc/') && statSync(join(deb, p)).isFile())
  .sort()
  .map(
    (p) =>
      `${createHash('md5')
        .update(readFileSync(join(deb, p)))
        .digest('hex')}  ${p}\n`,
  );
debFile('DEBIAN/md5sums', md5sums.join(''));
// Directories as mkdir made them depend on the umask: 0755, except the two the agent's user owns.
const privateDirs = ['etc/palisade-agent', 'var/lib/palisade-agent'];
for (const p of ['', ...readdirSync(deb, { recursive: true })])
  if (statSync(join(deb, p)).isDirectory() && !privateDirs.includes(p)) chmodSync(join(deb, p), 0o755);
const installedKb = Math.ceil(
  readdirSync(deb, { recursive: true })
    .map((p) => statSync(join(deb, p)))
    .filter((s) => s.isFile())
    .reduce((sum, s) => sum + s.size, 0) / 1024,
);
debFile(
  'DEBIAN/control',
  control
    .replace('@VERSION@', version)
    .replace('@INSTALLED_SIZE@', String(installedKb))
    .replace('@DEPENDS@', shlibsDepends(exe)),
);
dateTree(deb);
const debName = `palisade-agent_${version}_amd64.deb`;
// dpkg-deb sorts the members, dates the ar members SOURCE_DATE_EPOCH (from the environment) and
// takes the files' own dates, set above.
run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', deb, join(out, debName)]);

// --- npm tarballs ------------------------------------------------------------------------------
// @palisade/protocol is on no registry: it travels inside each tarball (bundleDependencies). npm
// never installs the dependencies of a bundled package, so zod, its one dependency, is declared by
// the carrying package instead (Node finds it one node_modules up) and removed from the bundled manifest.
function stageNpm(pkg, extra) {
  const src = join(root, 'packages', pkg);
  const dir = join(work, `npm-${pkg}`);
  const manifest = readJson(`packages/${pkg}/package.json`);
  const protocol = readJson('packages/protocol/package.json');
  mkdirSync(dir);
  cpSync(join(src, 'dist/src'), join(dir, 'dist/src'), { recursive: true });
  cpSync(join(src, 'bin'), join(dir, 'bin'), { recursive: true });
  const protoDir = join(dir, 'node_modules/@palisade/protocol');
  cpSync(join(root, 'packages/protocol/dist/src'), join(protoDir, 'dist/src'), { recursive: true });
  writeFileSync(
    join(protoDir, 'package.json'),
    `${JSON.stringify({ ...protocol, private: undefined, dependencies: undefined }, null, 2)}\n`,
  );
  const exports = Object.fromEntries(
    Object.entries(manifest.exports ?? {}).filter(([, target]) => !JSON.stringify(target).includes('/dist/test/')),
  );
  const staged = {
    ...manifest,
    private: undefined,
    devDependencies: undefined,
    exports,
    license: readJson('package.json').license,
    engines: readJson('package.json').engines,
    files: ['bin', 'dist/src', ...(extra?.files ?? [])],
    dependencies: { ...manifest.dependencies, ...protocol.dependencies, '@palisade/protocol': protocol.version },
    bundleDependencies: ['@palisade/protocol'],
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);
  extra?.stage?.(dir);
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], { cwd: dir }).toString());
  return packed[0].filename;
}

step('console: npm tarball with the dashboard');
stageNpm('console', {
  files: ['web', 'install'],
  stage: (dir) => {
    cpSync(join(root, 'packages/web/dist'), join(dir, 'web'), {
      recursive: true,
      filter: (p) => !p.startsWith(join(root, 'packages/web/dist/test')),
    });
    // GET /install/agent.sh (docs/agent.md, "One-line install").
    cpSync(join(root, 'packages/console/install'), join(dir, 'install'), { recursive: true });
  },
});
step('sdk: npm tarball with the palisade CLI');
stageNpm('sdk');

// --- The console as one executable and a .deb (scripts/console-sea.mjs) --------------------------
await buildConsoleNative({
  root,
  out,
  work,
  version: releaseVersion,
  epoch,
  run,
  step,
  fail,
  dateTree,
  reproducibleTar,
});

sumsAndSignature();

// --- Sums ----------------------------------------------------------------------------------------
function sumsAndSignature() {
  step('SHA256SUMS');
  const artifacts = readdirSync(out)
    .filter((f) => f !== 'SHA256SUMS')
    .sort();
  const sums = artifacts.map(
    (f) =>
      `${createHash('sha256')
        .update(readFileSync(join(out, f)))
        .digest('hex')}  ${f}`,
  );
  writeFileSync(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
  const written = [...artifacts, 'SHA256SUMS'];
  if (signKey !== null) {
    step('SHA256SUMS.sig (Ed25519) and release.pub');
    writeFileSync(join(out, 'SHA256SUMS.sig'), sign(null, readFileSync(join(out, 'SHA256SUMS')), signKey));
    const raw = Buffer.from(createPublicKey(signKey).export({ format: 'jwk' }).x, 'base64url');
    writeFileSync(join(out, 'release.pub'), `${raw.toString('base64')}\n`);
    written.push('SHA256SUMS.sig', 'release.pub');
  } else {
    step('unsigned (no --sign-key): the console will say so, and install lines pin no release key');
  }

  for (const f of written) console.log(`  ${String(statSync(join(out, f)).size).padStart(10)}  ${join(out, f)}`);
  step(`done (${written.length} files)`);
}
